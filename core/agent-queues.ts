// Where agents' Temporal workers listen, and when an agent's session counts as connected.
// Agents and the provision engine both derive queue names from here.

/** A site agent's session is connected while its last heartbeat is younger than this (three of its beats). */
export const AGENT_SESSION_FRESH_MS = 15_000;

/** Provision states a machine rests in with its installed OS running (a day-2 run on it keeps the state). */
const nodeRestStates: ReadonlySet<string> = new Set(['deployed', 'adopted']);

/**
 * How often an agent heartbeats its session, by role: three beats fit in a fresh session, so two
 * may be missed. A site agent beats every 5 s: its session decides who holds the site's boot
 * lease (15 s TTL). A ramdisk beats every 15 s: it holds no lease, a fleet runs one per machine
 * being provisioned (at 5 s, 500 of them kept the control plane's core busy verifying and
 * recording their heartbeats), and its session is never trusted alone: metal.ensureRamdisk asks
 * a ramdisk it believes connected before it uses it. An installed node's agent beats every 60 s
 * while its machine is deployed or adopted, and every 15 s in any other state (deploying,
 * releasing, adopting): a deployed fleet beats for as long as it runs, so its beats are the control plane's steady load (10,000
 * resting nodes: about 170 signed requests a second, against 670 at 15 s). The beat after a
 * deploy's success, which carries the host config it set, still comes within 15 s; a node agent
 * back after a reboot says so in its first beat, whatever the interval.
 */
export function sessionIntervalMsFor(role: string, provisionState?: string | null): number {
  if (role === 'site') return AGENT_SESSION_FRESH_MS / 3;
  if (role === 'node' && provisionState != null && nodeRestStates.has(provisionState)) return 4 * AGENT_SESSION_FRESH_MS;
  return AGENT_SESSION_FRESH_MS;
}

/** The longest interval a role is given: its session stays connected for three of them. */
const longestIntervalMsFor = (role: string): number => sessionIntervalMsFor(role, role === 'node' ? 'deployed' : null);

/**
 * How long an agent's heartbeat waits for its answer (twice a site agent's 5 s interval): an
 * answer that comes within it still finds the session fresh, while a heartbeat given up on and
 * sent again is worked on twice by a control plane already late.
 */
export const HEARTBEAT_ANSWER_WAIT_MS = (AGENT_SESSION_FRESH_MS * 2) / 3;

export type QueueKind = 'control' | 'site' | 'ramdisk' | 'node';
export const queueKinds = ['control', 'site', 'ramdisk', 'node'] as const satisfies readonly QueueKind[];

export const siteAgentQueue = (siteId: string, agentNodeId: string): string => `site.${siteId}.${agentNodeId}`;
/**
 * A ramdisk's queue is its boot's own, named by the tag of its key (made afresh at each boot,
 * kept by a renewal): a ramdisk the BMC powered off cannot close its long polls, and one still
 * open at the server would otherwise take the next boot's first task and never answer it.
 */
export const ramdiskQueue = (nodeId: string, keyTag: string): string => `ramdisk.${nodeId}.${keyTag}`;
/** An agent key's tag: 16 hex digits (the first 8 bytes of the SHA-256 of its SubjectPublicKeyInfo). */
const AGENT_KEY_TAG = /^[0-9a-f]{16}$/;
/** Whether `queue` is a ramdisk queue of `nodeId` (a queue a signal names is checked before any step is sent to it). */
export function isRamdiskQueueOf(queue: unknown, nodeId: string): queue is string {
  const prefix = `ramdisk.${nodeId}.`;
  return typeof queue === 'string' && queue.startsWith(prefix) && AGENT_KEY_TAG.test(queue.slice(prefix.length));
}
export const nodeAgentQueue = (nodeId: string): string => `node.${nodeId}`;

/** Whether a session of `role` heartbeat within three of the longest interval its role is given. */
export function isConnected(lastSeenAt: Date, now: number, role: string): boolean {
  return now - lastSeenAt.getTime() < 3 * longestIntervalMsFor(role);
}
