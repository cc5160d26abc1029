// A provision run's look at the agent its machine runs now, for its join waits
// (workflows/provision/join-wait.ts): the join path tells the run with agentJoined once, best
// effort, and a run that did not hear of a join finds it here. A connection is the agent's
// session since its first beat, or since it came back (services/agent-sessions/record-heartbeat.ts).
import { isConnected } from '../core/agent-queues';
import type { ActivityDeps } from './deps';

export interface AgentConnection {
  role: 'ramdisk' | 'node';
  taskQueue: string;
  /** When this connection opened: a new one has another. */
  connectedAt: string;
}

export function createAgentConnectionActivities(deps: ActivityDeps) {
  return {
    /** The machine's live ramdisk or node agent connection; null when none beats. */
    async 'metal.agentConnection'(input: { nodeId: string }): Promise<AgentConnection | null> {
      const session = await deps.db.agentSession.findUnique({ where: { nodeId: input.nodeId } });
      if (!session || (session.role !== 'ramdisk' && session.role !== 'node')) return null;
      if (!isConnected(session.lastSeenAt, Date.now(), session.role)) return null;
      return { role: session.role, taskQueue: session.taskQueue, connectedAt: session.connectedAt.toISOString() };
    },
  };
}
export type AgentConnectionActivities = ReturnType<typeof createAgentConnectionActivities>;
