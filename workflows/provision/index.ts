// `provision(plan, target, patchLevel)`: the one generic workflow that runs any compiled profile. It
// walks the plan (steps, then acceptance, then cleanup, which always runs) with the step
// runner; retries, timeouts, rejoin waits, cancellation and crash resumption come from
// Temporal. Deterministic: no I/O, no clocks but the workflow's own.
import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, workflowInfo } from '@temporalio/workflow';
import type { JsonValue, Plan, ProvisionResult, ProvisionTarget } from '../../core/plan';
import { acceptEndRequests, notifyParentEnded } from '../lifecycle-handles';
import { enterPatchLevel } from '../patches';
import { quorumGate } from '../quorum-gate';
import { startBootSlot } from './boot-slot';
import { startRunStatus } from './status';
import { showStepInMemo } from './step-memo';
import type { RunContext } from './run-context';
import { failureMessage, runStep } from './step-runner';

/** `patchLevel`: the changes its starter's code knew (../patches.ts); none in runs begun before levels. */
export async function provision(plan: Plan, target: ProvisionTarget, patchLevel?: number): Promise<ProvisionResult> {
  enterPatchLevel(patchLevel);
  acceptEndRequests();
  try {
    const result = await walk(plan, target);
    await notifyParentEnded({ result });
    return result;
  } catch (failure) {
    await notifyParentEnded({ failure });
    throw failure;
  }
}

async function walk(plan: Plan, target: ProvisionTarget): Promise<ProvisionResult> {
  const { workflowId } = workflowInfo();
  const run = startRunStatus(target);
  const { status } = run;
  // The destructive-batch quorum: destructive steps wait for the run's approved batch, which every step's input then carries.
  const gate = quorumGate(plan, target, workflowId, run.waitFor);
  const ctx: RunContext = { workflowId, target, run, gate, bootSlot: startBootSlot(workflowId, target.nodeId, run) };
  const outputs: Record<string, JsonValue> = {};
  const keep = (step: Plan['steps'][number], output: unknown) => {
    if (output !== undefined) outputs[step.key] = output as JsonValue;
  };

  let failure: unknown;
  try {
    await run.main.run(async () => {
      // undefined when there is no batch to ask for: nothing to await.
      const asking = gate.start();
      if (asking) await asking;
      for (const step of plan.steps) keep(step, await runStep(ctx, step));
      status.phase = 'acceptance';
      run.showDetails();
      for (const step of plan.acceptance) keep(step, await runStep(ctx, step));
    });
  } catch (err) {
    failure = err;
  }

  // Cleanup runs whatever happened, and cannot be cancelled: boot entries and tokens
  // never outlive their workflow. A plan without cleanup steps makes no scope (its promises
  // cost the SDK's stack-trace hook; a scope sends no command).
  status.phase = 'cleanup';
  run.showDetails();
  if (plan.cleanup.length > 0) {
    await CancellationScope.nonCancellable(async () => {
      for (const step of plan.cleanup) {
        try {
          keep(step, await runStep(ctx, step));
        } catch {
          // recorded in the history; the other cleanup steps still run
        }
      }
    });
  }
  // The boot slot outlives cleanup (boot.cleanUp still touches the machine's boot), never the run.
  if (ctx.bootSlot.taken()) {
    await CancellationScope.nonCancellable(async () => {
      try {
        await ctx.bootSlot.give();
      } catch {
        // the site's reclaim frees it (services/boot-slots/reclaim.ts)
      }
    });
  }
  status.step = null;
  showStepInMemo(null);

  if (failure !== undefined) {
    status.error = status.abortReason ?? failureMessage(failure);
    status.phase = status.abortReason === null && isCancellation(failure) ? 'cancelled' : 'failed';
    run.showDetails();
    if (status.abortReason !== null) throw ApplicationFailure.nonRetryable(`aborted: ${status.abortReason}`, 'ABORTED');
    if (isCancellation(failure)) throw failure;
    if (failure instanceof ActivityFailure && failure.cause instanceof ApplicationFailure) throw failure.cause;
    throw failure;
  }
  status.phase = 'succeeded';
  run.showDetails();
  return { outcome: 'succeeded', history: status.history, outputs };
}
