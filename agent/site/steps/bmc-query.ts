// bmc.query: what the BMC says about the machine (power state, SMBIOS UUID, PXE MACs, IPs).
// Reads only, so no operation id is needed.
import { z } from 'zod';
import { parseWith } from '../../../core/errors';
import { withBmc } from '../bmc-access';
import type { SiteStep, SiteStepDeps } from './deps';

export function bmcQueryStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    parseWith(z.object({}).strict(), input.with);
    return withBmc(deps, input, async (driver) => ({
      driver: driver.name,
      power: await driver.power.get(),
      boot: await driver.management.getBoot(),
      inspection: await driver.inspect(),
    }));
  };
}
