// The one place that tells a workflow its machine's agent is back: when a `ramdisk`
// (discovery token) or `node` (provisioned token) agent joins, the workflow that minted
// the token gets `agentJoined` — what ends a `boot.kexec … await: 'rejoin'` wait. A node
// agent that joined long ago does not join again after a reboot: its session opens anew
// (the heartbeat's `opened`), and the node's running provision workflows get the same
// `agentJoined` (what ends remediate-reboot's `power.setPower … await: 'rejoin'`). After the
// join or heartbeat committed, and best effort: a workflow that ended meanwhile is no reason
// to refuse an agent.
import type { Client } from '@temporalio/client';
import type { Admission, JoinTokenRecord } from '../../core/attestors/attestor';
import { runningProvisionRuns } from '../temporal/readers';
import { notifyAgentJoined } from '../temporal/senders';

export interface AgentJoinedSignal {
  role: 'ramdisk' | 'node';
  agentNodeId: string;
  /** The queue the agent that joined serves: a ramdisk's is its boot's own. */
  taskQueue?: string;
}

export type AgentJoinedNotifier = (workflowId: string, signal: AgentJoinedSignal) => Promise<void>;

/** Where a signal Temporal did not take is told (the API's pino logger). */
export interface JoinSignalLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * The notifier the API wires: Temporal's signal `agentJoined` (workflows/provision-handles.ts).
 * A signal Temporal did not take (unreachable, its store timed out) is said in `log`: the run
 * it was for finds the join itself (workflows/provision/join-wait.ts).
 */
export function temporalAgentJoinedNotifier(temporal: Client, log?: JoinSignalLog): AgentJoinedNotifier {
  return async (workflowId, signal) => {
    try {
      await notifyAgentJoined(temporal, workflowId, signal);
    } catch (error) {
      log?.warn(
        { workflowId, role: signal.role, error: error instanceof Error ? error.message : String(error) },
        'agentJoined signal failed: the run finds the join itself at its next look (every 30 s)',
      );
      throw error;
    }
  };
}

/** At most this many running workflows of one node hear of its agent's session (a node runs one or two). */
const MAX_SIGNALLED_WORKFLOWS = 8;

/** The node's running provision workflows, told that its node agent is back; answers their ids. */
export async function signalNodeAgentBack(temporal: Client, nodeId: string, notify: AgentJoinedNotifier): Promise<string[]> {
  const running = await runningProvisionRuns(temporal, nodeId, MAX_SIGNALLED_WORKFLOWS);
  await Promise.all(running.map((workflowId) => notify(workflowId, { role: 'node', agentNodeId: nodeId }).catch(() => undefined)));
  return running;
}

export async function signalAgentJoined(
  notify: AgentJoinedNotifier | undefined,
  token: JoinTokenRecord,
  admission: Admission,
  taskQueue: string,
): Promise<void> {
  if (!notify || !token.workflowId) return;
  if (admission.role !== 'ramdisk' && admission.role !== 'node') return;
  await notify(token.workflowId, { role: admission.role, agentNodeId: admission.nodeId, taskQueue }).catch(() => undefined);
}
