// management.setBootDevice and bmc.boot: the next (or every) boot device, once per step.
import { IronflowError, parseWith } from '../../../core/errors';
import type { StepInput } from '../../../core/plan';
import { bootDeviceWithSchema } from '../../../core/steps/site-commands';
import { runBmcCommand } from '../../bmc/commands';
import type { BmcDriver, BootSetting } from '../../bmc/driver';
import { withBmc } from '../bmc-access';
import { operationIdFor } from '../operation-id';
import type { SiteStep, SiteStepDeps } from './deps';

/** Sets the boot device of `input`'s step on an open BMC, at most once per operation id (boot.pxeBoot sets it too). */
export async function setBootDevice(
  deps: SiteStepDeps,
  input: StepInput,
  driver: BmcDriver,
  { device, persistent }: BootSetting,
): Promise<BootSetting & { sent: boolean }> {
  const operationId = operationIdFor(input, `boot.set.${device}.${persistent ? 'persistent' : 'once'}`);
  const outcome = await runBmcCommand(deps.ledgerFor(input), driver, operationId, { kind: 'boot.set', setting: { device, persistent } });
  deps.log.info(outcome.reused ? 'boot device already set; reused' : 'boot device set', {
    nodeId: input.target.nodeId,
    workflowId: input.workflowId,
    step: input.stepKey,
    device,
    persistent,
  });
  return { device, persistent, sent: !outcome.reused };
}

export function bootDeviceStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    const { device, persistent } = parseWith(bootDeviceWithSchema, input.with);
    if (device === 'bios')
      throw new IronflowError('UNSUPPORTED', 'booting into BIOS setup is not offered by the Redfish or IPMI drivers; use pxe, disk or cd', {
        path: 'with.device',
      });
    return withBmc(deps, input, (driver) => setBootDevice(deps, input, driver, { device, persistent }));
  };
}
