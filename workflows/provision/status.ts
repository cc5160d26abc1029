// The provision run's status (the `status` query), the Web UI's current details that follow
// it, and the handlers that change it: abort (signal and Update), confirmMac, agentJoined.
import { ApplicationFailure, CancellationScope, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { isRamdiskQueueOf } from '../../core/agent-queues';
import type { ProvisionStatus, ProvisionTarget } from '../../core/plan';
import { provisionDetails } from '../../core/workflow-summaries';
import { installConfirmMacHandlers, noteRejectedSignal } from '../confirm-mac-handlers';
import { startedWith } from '../patches';
import { abortSignal, abortUpdate, agentJoinedSignal, statusQuery, type AgentJoined } from '../provision-handles';

const MAX_REASON = 512;

type JoinRole = AgentJoined['role'];

export interface RunStatus {
  readonly status: ProvisionStatus;
  /** Cancelled by an abort: the steps and acceptance run in it, cleanup does not. */
  readonly main: CancellationScope;
  /** Says what the run waits for (null: nothing) and since when; the Web UI's details follow. */
  waitFor(what: string | null, since?: string): void;
  showDetails(): void;
  /** When the current wait began (workflow time), if the run waits. */
  waitingSince(): string | null;
  /** agentJoined signals received so far: all of them, or of one role. */
  joins(role?: JoinRole): number;
  /** The agent of the last join of `role`. */
  lastJoined(role: JoinRole): string | null;
  /** Joins of `role` no wait of this run took yet. */
  untakenJoins(role: JoinRole): number;
  /** A wait took every join of `role` so far: a later wait waits for the next. */
  takeJoins(role: JoinRole): void;
  /** The queue of the machine's ramdisk as this run knows it: the last ramdisk that joined, or one found answering (null: neither yet). */
  ramdiskQueue(): string | null;
  /** The ramdisk serving `queue` answered: later steps on the ramdisk go there. */
  useRamdiskQueue(queue: string): void;
  /** An agent joined, as agentJoined says (or as the run found itself): counted once per ramdisk boot. */
  noteJoin(join: AgentJoined): void;
}

/** The status and its handlers; call once, before the first step. */
export function startRunStatus(target: ProvisionTarget): RunStatus {
  const status: ProvisionStatus = {
    phase: 'steps',
    step: null,
    waitingFor: null,
    progress: null,
    history: [],
    abortReason: null,
    confirmedMac: null,
    rejectedSignals: [],
    error: null,
  };
  const main = new CancellationScope();
  // Counted, not kept: anyone reaching Temporal can send agentJoined, as often as they like.
  const joined: Record<JoinRole, number> = { ramdisk: 0, node: 0 };
  const lastAgent: Record<JoinRole, string | null> = { ramdisk: null, node: null };
  const taken: Record<JoinRole, number> = { ramdisk: 0, node: 0 };
  let ramdiskQueue: string | null = null;
  let waitingSince: string | null = null;

  const showDetails = () => setCurrentDetails(provisionDetails(status, waitingSince));
  const waitFor = (what: string | null, since?: string) => {
    status.waitingFor = what;
    waitingSince = what === null ? null : (since ?? new Date().toISOString());
    showDetails();
  };

  const abortProblem = (reason: unknown): string | undefined => {
    if (typeof reason !== 'string' || reason.trim() === '' || reason.length > MAX_REASON) return `a reason is 1 to ${MAX_REASON} characters`;
    if (status.abortReason !== null) return `already aborted: ${status.abortReason}`;
    if (status.phase !== 'steps' && status.phase !== 'acceptance')
      return `nothing to abort: the run is ${status.phase === 'cleanup' ? 'cleaning up' : status.phase}`;
    return undefined;
  };
  const abort = (reason: string) => {
    status.abortReason = reason;
    main.cancel();
  };

  setHandler(statusQuery, () => status);
  setHandler(abortSignal, (reason) => {
    const problem = abortProblem(reason);
    if (problem) noteRejectedSignal(status.rejectedSignals, { name: 'abort', reason: problem });
    else abort(reason);
  });
  setHandler(abortUpdate, (reason) => (abort(reason), status), {
    validator: (reason) => {
      const problem = abortProblem(reason);
      if (problem) throw ApplicationFailure.nonRetryable(problem, 'INVALID_STATE');
    },
  });
  installConfirmMacHandlers(target.nodeId, {
    confirmed: (mac) => void (status.confirmedMac = mac),
    rejected: (reason) => noteRejectedSignal(status.rejectedSignals, { name: 'confirmMac', reason }),
  });
  const noteJoin = (join: AgentJoined) => {
    if (join?.role !== 'ramdisk' && join?.role !== 'node') return;
    const ownRamdisk = join.role === 'ramdisk' && isRamdiskQueueOf(join.taskQueue, target.nodeId);
    // The ramdisk this run knows already (each boot's serves a queue of its own): a join the run found itself, told again.
    if (ownRamdisk && join.taskQueue === ramdiskQueue && startedWith('join-recheck')) return;
    joined[join.role] += 1;
    lastAgent[join.role] = typeof join.agentNodeId === 'string' ? join.agentNodeId : null;
    // Only a ramdisk queue of this node: a signal naming another would send the machine's steps elsewhere.
    if (ownRamdisk) ramdiskQueue = join.taskQueue as string;
  };
  setHandler(agentJoinedSignal, noteJoin);

  return {
    status,
    main,
    waitFor,
    showDetails,
    waitingSince: () => waitingSince,
    joins: (role) => (role ? joined[role] : joined.ramdisk + joined.node),
    lastJoined: (role) => lastAgent[role],
    untakenJoins: (role) => joined[role] - taken[role],
    takeJoins: (role) => void (taken[role] = joined[role]),
    ramdiskQueue: () => ramdiskQueue,
    useRamdiskQueue: (queue) => void (ramdiskQueue = queue),
    noteJoin,
  };
}
