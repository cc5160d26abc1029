// The node lifecycle workflow's activities: read what the node's state must run, apply a
// finished workflow's outcome, abort (the same path as metal.abort), and the checks that
// keep exactly one state workflow running.
import { Context } from '@temporalio/activity';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { isIronflowError } from '../core/errors';
import { appendEvent } from '../services/events';
import { applyStateOutcome, type AppliedOutcome, type StateOutcome } from '../services/metal/lifecycle-moves';
import { findMetalNode } from '../services/metal/transition';
import { applyVerb, type MetalDeps } from '../services/metal/verbs';
import type { Plan, ProvisionResult, ProvisionTarget } from '../core/plan';
import { planForState } from '../profiles/plan-for-state';
import { resolveProfile } from '../profiles/store';
import type { ActivityDeps } from './deps';
import { withVerifiedAttestations } from './attested-outcome';
import { withDeployHostSpec } from './deploy-host-spec';

export type LifecycleNext =
  | { kind: 'rest'; state: string | null }
  | { kind: 'moved'; state: string | null }
  | { kind: 'run'; state: string; workflowId: string; plan: Plan; target: ProvisionTarget };

const errorOf = (err: unknown) =>
  isIronflowError(err) ? { code: err.code, message: err.message } : { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) };

export function metalDeps(deps: ActivityDeps): MetalDeps {
  return {
    db: deps.db,
    temporal: deps.temporal,
    controlQueue: deps.config.controlQueue,
    resolveDeployProfile: async (db, tenantId, id, version) => (await resolveProfile(db, tenantId, id, version)).document as { target: string },
  };
}

export function createNodeLifecycleActivities(deps: ActivityDeps) {
  return {
    async lifecycleNext(nodeId: string): Promise<LifecycleNext> {
      const node = await findMetalNode(deps.db, undefined, nodeId);
      let next;
      try {
        next = await planForState(deps.db, node);
      } catch (err) {
        // A plan that cannot be built (a deploy profile gone bad) fails the state like its workflow would.
        const applied = await applyStateOutcome(deps.db, { nodeId, workflowId: node.workflowId ?? '', outcome: 'failed', error: errorOf(err) });
        return { kind: applied.applied ? 'moved' : 'rest', state: applied.state };
      }
      if (next.kind === 'rest') return { kind: 'rest', state: node.provisionState };
      if (next.kind === 'unsupported') {
        const applied = await applyStateOutcome(deps.db, {
          nodeId,
          workflowId: node.workflowId ?? '',
          outcome: 'failed',
          error: { code: 'UNSUPPORTED', message: next.message },
        });
        return { kind: 'moved', state: applied.state };
      }
      return { kind: 'run', state: node.provisionState as string, workflowId: next.workflowId, plan: next.plan, target: next.target };
    },

    async lifecycleStarted(input: { nodeId: string; workflowId: string; profileRef: string }): Promise<boolean> {
      const node = await findMetalNode(deps.db, undefined, input.nodeId);
      if (node.workflowId !== input.workflowId) return false;
      await appendEvent(deps.db, {
        tenantId: node.tenantId,
        type: 'node.provision.workflow',
        subjectId: node.id,
        data: { workflowId: input.workflowId, profile: input.profileRef, state: node.provisionState },
      });
      return true;
    },

    async lifecycleApply(outcome: StateOutcome): Promise<AppliedOutcome> {
      return applyStateOutcome(deps.db, await withDeployHostSpec(deps.db, await withVerifiedAttestations(deps, outcome)));
    },

    /** The lifecycle's abort signal: the same transition as metal.abort; an illegal one is recorded, not thrown. */
    async lifecycleAbort(input: { nodeId: string; reason: string }): Promise<{ aborted: boolean; reason?: string }> {
      try {
        await applyVerb(metalDeps(deps), { nodeId: input.nodeId }, { verb: 'abort', reason: input.reason.slice(0, 512) || 'aborted' });
        return { aborted: true };
      } catch (err) {
        if (!isIronflowError(err)) throw err;
        const node = await deps.db.node.findUnique({ where: { id: input.nodeId } });
        if (node)
          await appendEvent(deps.db, {
            tenantId: node.tenantId,
            type: 'node.provision.abort-refused',
            subjectId: node.id,
            data: { code: err.code, message: err.message },
          });
        return { aborted: false, reason: err.message };
      }
    },

    /** A state workflow this run did not start (a previous run's): wait for its end. */
    async lifecycleAwaitWorkflow(
      workflowId: string,
    ): Promise<{ outcome: 'succeeded'; result: ProvisionResult } | { outcome: 'failed'; error: { code: string; message: string } }> {
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat(), 5000);
      try {
        const result = (await deps.temporal.workflow.getHandle(workflowId).result()) as ProvisionResult;
        return { outcome: 'succeeded', result };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw ApplicationFailure.nonRetryable(`workflow ${workflowId} not found`, 'NOT_FOUND');
        if (err instanceof WorkflowFailedError) {
          const cause = err.cause as { type?: string; message?: string } | undefined;
          return { outcome: 'failed', error: { code: cause?.type ?? 'INTERNAL', message: cause?.message ?? err.message } };
        }
        throw err;
      } finally {
        clearInterval(beat);
      }
    },
  };
}
export type NodeLifecycleActivities = ReturnType<typeof createNodeLifecycleActivities>;
