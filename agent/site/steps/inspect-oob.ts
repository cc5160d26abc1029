// inspect.oob: verifies BMC access and inspects the machine out of band through its BMC
// driver (Redfish: SMBIOS UUID and the PXE-capable NICs' MACs). The answer's macs and
// productUuid are what the lifecycle records when enrolling or inspecting completes, so a
// machine enrolled by its BMC alone learns the MACs it PXE-boots from. Reads only: no
// operation id.
import { z } from 'zod';
import { parseWith } from '../../../core/errors';
import type { InspectOobOutput } from '../../../core/schemas/inventory';
import { withBmc } from '../bmc-access';
import type { SiteStep, SiteStepDeps } from './deps';

export function inspectOobStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    parseWith(z.object({}).strict(), input.with);
    return withBmc(deps, input, async (driver): Promise<InspectOobOutput> => {
      const inspection = await driver.inspect();
      return {
        driver: driver.name,
        power: await driver.power.get(),
        macs: inspection.pxeMacs,
        ...(inspection.systemUuid ? { productUuid: inspection.systemUuid.toLowerCase() } : {}),
        ips: inspection.ips,
      };
    });
  };
}
