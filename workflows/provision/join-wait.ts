// A run's wait for its machine's next agent to join: the ramdisk metal.ensureRamdisk booted,
// the agent an `await: rejoin` step waits for, wait.agentJoined's. The join path tells the run
// (agentJoined) once, best effort: a signal Temporal did not take would hold the machine until
// the step's deadline. So a run begun with the change also looks every JOIN_RECHECK_MS for a new
// connection of the machine's agent (activities/agent-connections.ts); runs begun before wait
// for the signal alone (patch join-recheck, read from the run's level: no marker).
import { condition } from '@temporalio/workflow';
import type { AgentConnection, AgentConnectionActivities } from '../../activities/agent-connections';
import { startedWith } from '../patches';
import { controlLeaves } from './control-leaves';
import type { RunContext } from './run-context';

const leaves = controlLeaves<AgentConnectionActivities>();

/** How often a waiting run looks for its machine's agent itself. */
const JOIN_RECHECK_MS = 30_000;

export interface JoinWait {
  /** The signal came: the wait is over. */
  arrived(): boolean;
  /** Whether a connection seen now is the join waited for (not the agent that ran before). */
  isNew(connection: AgentConnection): boolean;
  /** Workflow time. */
  deadline: number;
}

/** The machine's agent connection before the wait, to tell a new one by; undefined in a run begun before the change. */
export function connectionBefore(ctx: RunContext): Promise<AgentConnection | null> | undefined {
  return startedWith('join-recheck') ? leaves()['metal.agentConnection']({ nodeId: ctx.target.nodeId }) : undefined;
}

/** A connection that opened after `before`, of `role` if given; a ramdisk's is each boot's own queue. */
export function openedSince(before: AgentConnection | null, role?: AgentConnection['role']): (connection: AgentConnection) => boolean {
  return (connection) =>
    (role === undefined || connection.role === role) &&
    connection.connectedAt !== before?.connectedAt &&
    (connection.role !== 'ramdisk' || connection.taskQueue !== before?.taskQueue);
}

/** Whether the join came before the deadline: by its signal, or (`recheck`) found by the run; a join it found is noted as the signal would be. */
export async function awaitJoin(ctx: RunContext, wait: JoinWait, recheck: boolean): Promise<boolean> {
  if (!recheck) return condition(wait.arrived, Math.max(0, wait.deadline - Date.now()));
  for (;;) {
    const left = wait.deadline - Date.now();
    if (left <= 0) return false;
    if (await condition(wait.arrived, Math.min(JOIN_RECHECK_MS, left))) return true;
    const now = await leaves()['metal.agentConnection']({ nodeId: ctx.target.nodeId });
    if (now && wait.isNew(now)) {
      ctx.run.noteJoin({ role: now.role, agentNodeId: ctx.target.nodeId, taskQueue: now.taskQueue });
      return true;
    }
  }
}
