// The node lifecycle workflow's activities: read what the node's state must run, apply a
// finished workflow's outcome, abort (the same transition as metal.abort; the workflow stops
// its child itself), and the checks that keep exactly one state workflow running.
import { isIronflowError } from '../core/errors';
import { appendEvent } from '../services/events';
import { applyStateOutcome, type AppliedOutcome, type StateOutcome } from '../services/metal/lifecycle-moves';
import { findMetalNode } from '../services/metal/transition';
import { commitVerb, type MetalDeps } from '../services/metal/verbs';
import { stateWorkflowEnd } from '../services/temporal/readers';
import type { Plan, ProvisionTarget } from '../core/plan';
import type { StateWorkflowEnded } from '../workflows/lifecycle-handles';
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

    /**
     * The lifecycle's abort signal: the same transition as metal.abort, without its Temporal calls (the
     * lifecycle stops the state workflow it names itself); an illegal one is recorded, not thrown.
     */
    async lifecycleAbort(input: {
      nodeId: string;
      reason: string;
    }): Promise<{ aborted: true; reason: string; stop: string | null } | { aborted: false; reason: string }> {
      const reason = input.reason.slice(0, 512) || 'aborted';
      try {
        const { superseded } = await commitVerb(metalDeps(deps), { nodeId: input.nodeId }, { verb: 'abort', reason });
        return { aborted: true, reason, stop: superseded };
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

    /**
     * How a state workflow ended, or null while it runs: for one that may have ended without its
     * signal reaching this lifecycle (it was terminated, or so was the lifecycle run it told). One
     * look, no wait.
     */
    lifecycleWorkflowEnd: (workflowId: string): Promise<StateWorkflowEnded | null> => stateWorkflowEnd(deps.temporal, workflowId),
  };
}
export type NodeLifecycleActivities = ReturnType<typeof createNodeLifecycleActivities>;
