// power.setPower and bmc.power: one power command under the step's operation id. A cycle
// or reset whose first send had an unknown outcome is not sent again (it could reboot a
// machine that is already booting): the step reports the power state it reads instead.
import { parseWith } from '../../../core/errors';
import type { StepInput } from '../../../core/plan';
import { powerWithSchema, type PowerOutput } from '../../../core/steps/site-commands';
import { runBmcCommand } from '../../bmc/commands';
import type { BmcDriver, PowerAction } from '../../bmc/driver';
import { withBmc } from '../bmc-access';
import { operationIdFor } from '../operation-id';
import type { SiteStep, SiteStepDeps } from './deps';

/** One power command of `input`'s step on an open BMC, at most once per operation id (boot.pxeBoot sends three of a kind). */
export async function setPower(deps: SiteStepDeps, input: StepInput, driver: BmcDriver, action: PowerAction): Promise<PowerOutput> {
  const operationId = operationIdFor(input, `power.set.${action}`);
  const outcome = await runBmcCommand(deps.ledgerFor(input), driver, operationId, { kind: 'power.set', action });
  const fields = { nodeId: input.target.nodeId, workflowId: input.workflowId, step: input.stepKey, action, operationId };
  if (outcome.reused && outcome.interrupted) {
    const power = await driver.power.get();
    deps.log.warn('power command outcome unknown and not safe to resend; reporting the power state', { ...fields, power });
    return { action, sent: false, interrupted: true, power };
  }
  deps.log.info(outcome.reused ? 'power command already ran; reused' : 'power command sent', fields);
  return { action, sent: !outcome.reused, interrupted: false };
}

export function powerStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    const { action } = parseWith(powerWithSchema, input.with);
    return withBmc(deps, input, (driver) => setPower(deps, input, driver, action));
  };
}
