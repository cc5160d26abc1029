// `agentCommand`: one step kind run on a named agent's task queue (a site agent's, or a
// machine's ramdisk), started by hand (`temporal workflow start`, tests): the control plane
// no longer starts it, since the provision workflow sends its commands itself
// (workflows/provision/). Agents with pins still check its quorum bundle (docs/quorum.md).
import { proxyActivities } from '@temporalio/workflow';
import type { StepInput } from '../core/plan';

export interface AgentCommandInput {
  taskQueue: string;
  /** A step kind the agent serves (boot.prepareRamdisk, power.setPower, inventory.refresh …). */
  activity: string;
  input: StepInput;
  timeoutMs: number;
  /** How long the task may wait for the agent to pick it up (default: timeoutMs). */
  scheduleToStartMs?: number;
  /** Agents that heartbeat (site steps do, every second): a silent attempt fails after this. */
  heartbeatTimeoutMs?: number;
  /** Attempts in all (default 3). */
  maximumAttempts?: number;
}

export async function agentCommand(command: AgentCommandInput): Promise<unknown> {
  const run = proxyActivities<Record<string, (input: StepInput) => Promise<unknown>>>({
    taskQueue: command.taskQueue,
    startToCloseTimeout: command.timeoutMs,
    scheduleToStartTimeout: command.scheduleToStartMs ?? command.timeoutMs,
    ...(command.heartbeatTimeoutMs ? { heartbeatTimeout: command.heartbeatTimeoutMs } : {}),
    retry: {
      maximumAttempts: command.maximumAttempts ?? 3,
      initialInterval: '1 second',
      nonRetryableErrorTypes: ['INVALID_INPUT', 'INVALID_CONFIG', 'UNSUPPORTED', 'NOT_FOUND', 'PERMISSION_DENIED'],
    },
  })[command.activity];
  if (!run) throw new Error(`no activity ${command.activity}`);
  return run(command.input);
}
