// An agent keeps the outcome of each step of one attempt it runs (agent/common/step-outcomes.ts),
// so the run that sent one can ask what became of it when its answer never reached Temporal:
// the step's output, its failure, that it still runs, or nothing for a step it never ran, a
// step with retries (Temporal's to retry) or another run's step. That a run asks and goes on with
// the answer is test/integration/provision-engine.test.ts; that the question crosses the agent
// gateway, test/integration/agent-step-outcomes.test.ts.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { outcomeBytes, withStepOutcomes } from '../../agent/common/step-outcomes';
import { OUTCOME_MESSAGE_MAX, parseStepOutcome, STEP_OUTCOME_ACTIVITY, type StepOutcome, type StepOutcomeQuery } from '../../core/step-outcome';
import type { AgentActivity } from '../../agent/common/restricted-worker';

const RUN = { workflowId: 'provision-node_a-1', runId: 'run-1' };
/** A step of one attempt with a heartbeat timeout, as the provision workflow sends a kexec. */
const oneAttempt = (activityId: string, workflowExecution = RUN) =>
  new MockActivityEnvironment({ activityId, workflowExecution, heartbeatTimeoutMs: 30_000, retryPolicy: { maximumAttempts: 1 } });

function agentWith(steps: Record<string, AgentActivity>, bytesKept?: number) {
  const activities = withStepOutcomes(steps, bytesKept);
  const ask = activities[STEP_OUTCOME_ACTIVITY] as (query: StepOutcomeQuery) => Promise<StepOutcome>;
  return {
    activities,
    /** What the agent answers run `workflowExecution` about its activity `activityId`. */
    askAbout: (activityId: string, workflowExecution = RUN) => oneAttempt('ask', workflowExecution).run(ask, { activityId }),
  };
}

describe("an agent's step outcomes", () => {
  it('answers a step of one attempt with its output, its failure, or that it still runs', async () => {
    let finish: () => void = () => undefined;
    const agent = agentWith({
      'boot.kexec': async () => ({ kexec: true }),
      'disk.wipe': async () => {
        throw ApplicationFailure.nonRetryable('disk vda did not read back zeroes', 'UNVERIFIED_WIPE');
      },
      'deploy.image': () => new Promise((resolve) => (finish = () => resolve({ written: true }))),
    });

    expect(await oneAttempt('1').run(agent.activities['boot.kexec']!)).toEqual({ kexec: true });
    expect(await agent.askAbout('1')).toEqual({ state: 'succeeded', output: { kexec: true } });

    await expect(oneAttempt('2').run(agent.activities['disk.wipe']!)).rejects.toThrow('did not read back zeroes');
    expect(await agent.askAbout('2')).toEqual({ state: 'failed', type: 'UNVERIFIED_WIPE', message: 'disk vda did not read back zeroes' });

    const deploying = oneAttempt('3').run(agent.activities['deploy.image']!);
    expect(await agent.askAbout('3')).toEqual({ state: 'running' });
    finish();
    await deploying;
    expect(await agent.askAbout('3')).toEqual({ state: 'succeeded', output: { written: true } });
  });

  it('answers a step the SDK stopped when Temporal no longer held its attempt as failed, saying so', async () => {
    const agent = agentWith({ 'diag.dcgm': () => Context.current().cancelled.then(() => ({ passed: true })) });
    const env = oneAttempt('1');
    const running = env.run(agent.activities['diag.dcgm']!);
    expect(await agent.askAbout('1')).toEqual({ state: 'running' });
    env.cancel('NOT_FOUND');
    await expect(running).rejects.toThrow();
    expect(await agent.askAbout('1')).toEqual({
      state: 'failed',
      type: null,
      message: 'the agent stopped the step when Temporal no longer held its attempt (NOT_FOUND)',
    });
  });

  it('knows nothing of a step it never ran, a step with retries, or a step of another run', async () => {
    const agent = agentWith({ 'inventory.refresh': async () => ({ cpus: 8 }) });
    expect(await agent.askAbout('1')).toEqual({ state: 'unknown' });

    const withRetries = new MockActivityEnvironment({
      activityId: '1',
      workflowExecution: RUN,
      heartbeatTimeoutMs: 30_000,
      retryPolicy: { maximumAttempts: 3 },
    });
    expect(await withRetries.run(agent.activities['inventory.refresh']!)).toEqual({ cpus: 8 });
    expect(await agent.askAbout('1')).toEqual({ state: 'unknown' });

    await oneAttempt('2').run(agent.activities['inventory.refresh']!);
    expect(await agent.askAbout('2')).toEqual({ state: 'succeeded', output: { cpus: 8 } });
    expect(await agent.askAbout('2', { workflowId: RUN.workflowId, runId: 'run-2' })).toEqual({ state: 'unknown' });
    expect(await agent.askAbout('2', { workflowId: 'provision-node_b-1', runId: RUN.runId })).toEqual({ state: 'unknown' });
  });

  it('keeps outputs up to its bytes, forgetting the oldest first, and never one larger than them all', async () => {
    const report = (size: number) => ({ report: 'r'.repeat(size) });
    const kept = outcomeBytes({ state: 'succeeded', output: report(1000) });
    // Room for two reports of 1,000 characters, not three.
    let size = 1000;
    const agent = agentWith({ 'diag.dcgm': async () => report(size) }, 2 * kept + 100);
    const run = (activityId: string, reportSize: number) => {
      size = reportSize;
      return oneAttempt(activityId).run(agent.activities['diag.dcgm']!);
    };

    await run('1', 1000);
    await run('2', 1000);
    expect(await agent.askAbout('1')).toEqual({ state: 'succeeded', output: report(1000) });
    await run('3', 1000);
    // '1' was asked about last of the two before, so '2' is the one forgotten.
    expect(await agent.askAbout('2')).toEqual({ state: 'unknown' });
    expect(await agent.askAbout('1')).toEqual({ state: 'succeeded', output: report(1000) });
    expect(await agent.askAbout('3')).toEqual({ state: 'succeeded', output: report(1000) });

    // An output larger than the whole budget: the step still answers Temporal, and the agent
    // says it knows nothing of it (not that it still runs), keeping what it had.
    expect(await run('4', 3 * kept)).toEqual(report(3 * kept));
    expect(await agent.askAbout('4')).toEqual({ state: 'unknown' });
    expect(await agent.askAbout('3')).toEqual({ state: 'succeeded', output: report(1000) });

    // An output JSON cannot carry is never kept either, and the step's own answer is untouched.
    const odd = agentWith({ 'boot.kexec': async () => ({ size: 1n }) });
    expect(await oneAttempt('5').run(odd.activities['boot.kexec']!)).toEqual({ size: 1n });
    expect(await odd.askAbout('5')).toEqual({ state: 'unknown' });
  });
});

describe('an answer the workflow reads (parseStepOutcome)', () => {
  it('takes each outcome, cuts a long message, and names what is wrong with anything else', () => {
    expect(parseStepOutcome({ state: 'succeeded', output: { kexec: true } })).toEqual({ state: 'succeeded', output: { kexec: true } });
    expect(parseStepOutcome({ state: 'running', extra: 1 })).toEqual({ state: 'running' });
    expect(parseStepOutcome({ state: 'failed', type: null, message: 'm' })).toEqual({ state: 'failed', type: null, message: 'm' });
    const long = parseStepOutcome({ state: 'failed', type: 'DRIVER_ERROR', message: 'x'.repeat(OUTCOME_MESSAGE_MAX + 10) });
    expect('message' in long && long.message.length).toBe(OUTCOME_MESSAGE_MAX + 1);
    expect(parseStepOutcome(null)).toEqual({ problem: 'the answer is not an object' });
    expect(parseStepOutcome('succeeded')).toEqual({ problem: 'the answer is not an object' });
    expect(parseStepOutcome({ state: 'done' })).toEqual({ problem: 'state is not one of succeeded, failed, running, unknown' });
    expect(parseStepOutcome({ state: 'failed', type: 'T'.repeat(65), message: 'm' })).toEqual({
      problem: 'type is neither null nor a string of 1 to 64 characters',
    });
    expect(parseStepOutcome({ state: 'failed', type: null, message: 42 })).toEqual({ problem: 'message is not a string' });
  });
});
