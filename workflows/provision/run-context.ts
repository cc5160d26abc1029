// What every step of a run shares, and the input each step's work gets.
import type { PlanStep, ProvisionTarget, StepInput } from '../../core/plan';
import type { QuorumGate } from '../quorum-gate';
import type { BootSlot } from './boot-slot';
import type { RunStatus } from './status';

export interface RunContext {
  workflowId: string;
  target: ProvisionTarget;
  run: RunStatus;
  gate: QuorumGate;
  /** The site's boot slot metal.ensureRamdisk holds while the run boots and uses the ramdisk. */
  bootSlot: BootSlot;
}

export function stepInput(ctx: RunContext, step: PlanStep, extra: Partial<StepInput> = {}): StepInput {
  const { status } = ctx.run;
  const bundle = ctx.gate.bundle();
  return {
    workflowId: ctx.workflowId,
    stepKey: step.key,
    use: step.use,
    with: step.with,
    target: ctx.target,
    ...(status.confirmedMac && step.await === 'confirmMac' ? { confirmedMac: status.confirmedMac } : {}),
    ...(bundle ? { quorum: bundle } : {}),
    ...extra,
  };
}
