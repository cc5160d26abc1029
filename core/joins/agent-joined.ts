// The one place a join tells a workflow its machine's agent is back: when a `ramdisk`
// (discovery token) or `node` (provisioned token) agent joins, the workflow that minted
// the token gets `agentJoined` — what ends a `boot.kexec … await: 'rejoin'` wait. After the
// join committed, and best effort: a workflow that ended meanwhile is no reason to refuse
// an agent the attestor admitted.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Admission, JoinTokenRecord } from '../attestors/attestor';

export interface AgentJoinedSignal {
  role: 'ramdisk' | 'node';
  agentNodeId: string;
}

export type AgentJoinedNotifier = (workflowId: string, signal: AgentJoinedSignal) => Promise<void>;

/** The notifier the API wires: Temporal's signal `agentJoined` (workflows/provision-handles.ts). */
export function temporalAgentJoinedNotifier(temporal: Client): AgentJoinedNotifier {
  return async (workflowId, signal) => {
    try {
      await temporal.workflow.getHandle(workflowId).signal('agentJoined', signal);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  };
}

export async function signalAgentJoined(notify: AgentJoinedNotifier | undefined, token: JoinTokenRecord, admission: Admission): Promise<void> {
  if (!notify || !token.workflowId) return;
  if (admission.role !== 'ramdisk' && admission.role !== 'node') return;
  await notify(token.workflowId, { role: admission.role, agentNodeId: admission.nodeId }).catch(() => undefined);
}
