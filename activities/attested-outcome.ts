// Before a state workflow's outcome is applied, every attested step result it relies on is
// verified (core/attestations): each disk.wipe and diag.dcgm output of the state's plan must
// be signed by the node's certificate over the exact result and this run's step, and say
// what the step needs. One refusal fails the outcome with its code (the node goes to failed,
// never ready) and is a `security.attestation.refused` event. The count of verified wipes is
// what lets a release reach ready; it is set here only, never taken from the caller.
import type { Client } from '@temporalio/client';
import { isAttestedStepUse } from '../services/attestations/attestation';
import { checkAttestedResult } from '../services/attestations/results';
import { verifyAttestation } from '../services/attestations/verify';
import type { Db } from '../services/db';
import { isIronflowError } from '../core/errors';
import { appendEvent } from '../services/events';
import { labelsMatch } from '../core/label-expr';
import type { StateOutcome } from '../services/metal/lifecycle-moves';
import { findNodeById } from '../services/metal/node-reads';
import { runStartTime } from '../services/temporal/readers';
import type { PlanStep } from '../core/plan';
import { planForState } from '../profiles/plan-for-state';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface AttestedOutcomeDeps {
  db: Db;
  temporal: Client;
}

export async function withVerifiedAttestations(deps: AttestedOutcomeDeps, outcome: StateOutcome): Promise<StateOutcome> {
  const { verifiedWipes: _fromCaller, stepUses: _claimedUses, ...claimed } = outcome;
  if (claimed.outcome !== 'succeeded') return claimed;
  const node = await findNodeById(deps.db, claimed.nodeId);
  if (!node || node.workflowId !== claimed.workflowId) return claimed; // applyStateOutcome ignores it
  let planned;
  try {
    planned = await planForState(deps.db, node);
  } catch (error) {
    // Without the plan nothing can be checked, so nothing is counted (lifecycleNext fails a state the same way).
    if (!isIronflowError(error)) throw error;
    return { ...claimed, outcome: 'failed', error: { code: error.code, message: error.message } };
  }
  if (planned.kind !== 'run') return claimed;
  // Each output is read by its step's output schema (applyStateOutcome), found by the step's use in the plan, never by its shape.
  const stepUses = Object.fromEntries(
    [...planned.plan.steps, ...planned.plan.acceptance, ...planned.plan.cleanup]
      .flatMap((s) => [s, ...(s.fallback ? [s.fallback] : [])])
      .map((s) => [s.key, s.use]),
  );
  const outputs = claimed.outputs ?? {};
  // A step that had to run and answer (not skipped by its labels, no fallback, failure not
  // tolerated) and has no output is refused like an unsigned one: no answer is not a pass.
  const mustAnswer = (s: PlanStep) => s.onFailure === 'fail' && !s.fallback && labelsMatch(s.when, planned.target.labels);
  const attested = [...planned.plan.steps, ...planned.plan.acceptance].filter(
    (s) => isAttestedStepUse(s.use) && (outputs[s.key] !== undefined || mustAnswer(s)),
  );
  if (attested.length === 0) return { ...claimed, stepUses, verifiedWipes: 0 };

  const runStartedAt = await runStartTime(deps.temporal, claimed.workflowId);
  const pool = node.poolId ? await deps.db.pool.findUnique({ where: { id: node.poolId } }) : null;
  const allowEmulatedMachines = isRecord(pool?.policy) && pool.policy.allowEmulatedMachines === true;
  let verifiedWipes = 0;
  for (const step of attested) {
    const context = { use: step.use, nodeId: node.id, workflowId: claimed.workflowId, stepKey: step.key };
    try {
      const verified = await verifyAttestation(deps.db, outputs[step.key], { context, role: step.route, runStartedAt });
      checkAttestedResult(step.use, step.key, verified.result, { with: step.with, allowEmulatedMachines });
      if (step.use === 'disk.wipe') verifiedWipes += 1;
    } catch (error) {
      if (!isIronflowError(error)) throw error;
      const { reason, serial } = error.details;
      await appendEvent(deps.db, {
        tenantId: node.tenantId,
        type: 'security.attestation.refused',
        subjectId: node.id,
        data: {
          workflowId: claimed.workflowId,
          stepKey: step.key,
          use: step.use,
          code: error.code,
          reason: typeof reason === 'string' ? reason : 'refused',
          ...(typeof serial === 'string' ? { serial } : {}),
        },
      });
      return { ...claimed, outcome: 'failed', error: { code: error.code, message: error.message } };
    }
  }
  return { ...claimed, stepUses, verifiedWipes };
}
