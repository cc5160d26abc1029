// `siteCommand`: one site step kind run on a named site agent's task queue, for a control
// activity that relays work through the site agent (metal.ensureRamdisk: boot device, boot
// entries, power cycle). A workflow, because only workflows schedule activities; its id
// names the parent workflow, step, attempt and command, so a history shows each relay.
import { proxyActivities } from '@temporalio/workflow';
import type { StepInput } from '../core/plan';

export interface SiteCommandInput {
  taskQueue: string;
  /** A site step kind (boot.prepareRamdisk, power.setPower, management.setBootDevice …). */
  activity: string;
  input: StepInput;
  timeoutMs: number;
}

export async function siteCommand(command: SiteCommandInput): Promise<unknown> {
  const run = proxyActivities<Record<string, (input: StepInput) => Promise<unknown>>>({
    taskQueue: command.taskQueue,
    startToCloseTimeout: command.timeoutMs,
    scheduleToStartTimeout: command.timeoutMs,
    retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: ['INVALID_INPUT', 'INVALID_CONFIG', 'UNSUPPORTED', 'NOT_FOUND', 'PERMISSION_DENIED'] },
  })[command.activity];
  if (!run) throw new Error(`no activity ${command.activity}`);
  return run(command.input);
}
