// The question what became of a step (core/step-outcome.ts) reaches a real agent's worker
// (agent/common/restricted-worker.ts) through the agent gateway, and its answer comes back
// through it, sealed on the way like any step's. An agent answers a run about that run's own
// steps only: asked by another run about a step it ran, it knows nothing. That a run asks and
// goes on with the answer is test/integration/provision-engine.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RestrictedWorker } from '../../agent/common/restricted-worker';
import type { StepInput } from '../../core/plan';
import { STEP_OUTCOME_ACTIVITY, type StepOutcomeQuery } from '../../core/step-outcome';
import type { AgentCommandInput } from '../../workflows/agent-command';
import type { TestControlPlane } from '../helpers/control-plane';
import { startJoinedWorkerOnNewSite } from '../helpers/joined-worker';
import { metricsValue } from '../helpers/metrics';

let t: TestControlPlane;
let worker: RestrictedWorker | undefined;
let taskQueue: string;
let siteId: string;

beforeAll(async () => {
  ({ t, siteId, worker, taskQueue } = await startJoinedWorkerOnNewSite('lab-outcomes', {
    name: 'ramdisk-outcomes',
    mode: 'ramdisk',
    activities: { 'boot.kexec': async () => ({ kexec: true }) },
  }));
});

afterAll(async () => {
  await worker?.stop();
  await t?.close();
});

/** Runs `activity` once on the agent's queue with `input` (agentCommand), and answers its result. */
async function runOnAgent(activity: string, input: StepInput | StepOutcomeQuery, workflowId: string): Promise<unknown> {
  // agentCommand hands its input to the activity as it is; the question is not a step's input.
  const command: AgentCommandInput = { taskQueue, activity, input: input as StepInput, timeoutMs: 30_000, heartbeatTimeoutMs: 10_000, maximumAttempts: 1 };
  return t.cp.temporal.workflow.execute('agentCommand', { taskQueue: t.config.controlQueue, workflowId, args: [command] });
}

describe("an agent's step outcomes, through the gateway", () => {
  it('answers the question in the activity of that name, and another run learns nothing of a step it did not send', async () => {
    const kexecRun = `test:outcome-kexec:${Date.now()}`;
    const kexecInput: StepInput = {
      workflowId: kexecRun,
      stepKey: 'kexec',
      use: 'boot.kexec',
      with: {},
      target: { tenantId: 'root', nodeId: 'node-outcomes', siteId, provisionState: 'deploying', labels: {} },
    };
    // One attempt with a heartbeat timeout: the agent keeps its outcome (activity id 1 of its run).
    expect(await runOnAgent('boot.kexec', kexecInput, kexecRun)).toEqual({ kexec: true });

    const completions = () => metricsValue(t, `ironflow_gateway_calls_total{role="site",method="RespondActivityTaskCompleted"}`);
    const before = await completions();
    const answer = await runOnAgent(STEP_OUTCOME_ACTIVITY, { activityId: '1' }, `test:outcome-ask:${Date.now()}`);
    expect(answer).toEqual({ state: 'unknown' });
    expect((await completions()) - before).toBe(1);
  }, 60_000);
});
