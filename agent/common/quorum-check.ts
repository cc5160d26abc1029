// The agents' own check of the destructive-batch quorum (docs/quorum.md), before a
// destructive command runs: the site agent before BMC commands and site.httpProxy, the
// ramdisk before disk.wipe and deploy.image. The approvers' keys come only from a policy
// whose sha256 this agent was given out of band (the site agent's [quorum] pinned_policies;
// a ramdisk's if.quorum, which its site agent's boot script renders from that same config),
// never from the control plane that sends the command. An agent with no pins checks nothing
// (the tenant's policy is then enforced by the control plane alone). A refusal fails the step
// (PERMISSION_DENIED, details.reason) and is reported as a quorum.refused event.
import type { StepInput } from '../../core/plan';
import type { DestructiveKind } from '../../core/quorum/destructive';
import { QuorumRefusal, verifyQuorumBundle } from '../../services/quorum/verify';
import type { ControlPlaneClient, Signer } from './control-plane-client';
import type { AgentLog } from './log';

interface QuorumCheckDeps {
  /** sha256 (hex) of the quorum policies this agent trusts. */
  pins: readonly string[];
  client: ControlPlaneClient;
  signer: Signer;
  log: AgentLog;
  /** The node a command acts on: the ramdisk's own (from its certificate), the step's target on a site agent. */
  nodeIdOf: (input: StepInput) => string;
}

type Step = (input: StepInput) => Promise<unknown>;

export function requireApprovedBatch(kind: DestructiveKind, step: Step, deps: QuorumCheckDeps): Step {
  if (deps.pins.length === 0) return step;
  return async (input) => {
    const nodeId = deps.nodeIdOf(input);
    try {
      verifyQuorumBundle(input.quorum, { pins: deps.pins, nodeId, kind });
    } catch (error) {
      if (!(error instanceof QuorumRefusal)) throw error;
      const batchId = typeof input.quorum?.document?.batchId === 'string' ? input.quorum.document.batchId.slice(0, 64) : undefined;
      deps.log.warn('destructive command refused: no approved batch covers it', {
        nodeId,
        workflowId: input.workflowId,
        kind,
        reason: error.details.reason,
        ...(batchId ? { batchId } : {}),
      });
      await deps.client
        .signedPost(deps.signer, '/v1/agents/quorum-refusals', {
          nodeId,
          workflowId: input.workflowId.slice(0, 256),
          kind,
          reason: error.details.reason,
          message: error.message.slice(0, 1024),
          ...(batchId ? { batchId } : {}),
        })
        .catch((report: Error) => deps.log.warn('could not report the refusal', { nodeId, error: report.message }));
      throw error;
    }
    return step(input);
  };
}
