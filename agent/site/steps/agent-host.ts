// The shared kinds as a site agent runs them about itself: inventory.refresh reports its
// host, logs.collect returns its recent log entries; node.reboot is refused (a site agent
// does not reboot its own host from a workflow; machines are rebooted through their BMC).
import os from 'node:os';
import { z } from 'zod';
import { IronflowError, parseWith } from '../../../core/errors';
import { logsWithSchema } from '../../../core/steps/site-commands';
import type { SiteStep, SiteStepDeps } from './deps';

export function inventoryStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    parseWith(z.object({}).strict(), input.with);
    return {
      nodeId: deps.signer.current.nodeId,
      hostname: os.hostname(),
      platform: os.platform(),
      arch: os.arch(),
      cpus: os.cpus().length,
      memoryBytes: os.totalmem(),
      session: { connected: deps.session().connected, active: deps.session().active, epoch: deps.session().epoch },
    };
  };
}

export function logsStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    const { limit } = parseWith(logsWithSchema, input.with);
    return { entries: deps.log.tail(limit) };
  };
}

export function rebootStep(): SiteStep {
  return async () => {
    throw new IronflowError(
      'UNSUPPORTED',
      'node.reboot: a site agent does not reboot its own host from a workflow; reboot a machine with power.setPower (cycle)',
    );
  };
}
