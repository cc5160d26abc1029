// Where agents' Temporal workers listen, and when an agent's session counts as connected.
// Agents and the provision engine both derive queue names from here.

/** A site agent's session is connected while its last heartbeat is younger than this; a ramdisk's or a node agent's, three times this. */
export const AGENT_SESSION_FRESH_MS = 15_000;

/**
 * How often an agent heartbeats its session, by role: three beats fit in a fresh session, so two
 * may be missed. A site agent beats every 5 s: its session decides who holds the site's boot
 * lease (15 s TTL). A ramdisk and an installed node's agent beat every 15 s: neither holds a
 * lease, a fleet runs one per machine (at 5 s, 500 of them kept the control plane's core busy
 * verifying and recording their heartbeats), and a ramdisk's session is never trusted alone:
 * metal.ensureRamdisk asks a ramdisk it believes connected before it uses it.
 */
export const sessionIntervalMsFor = (role: string): number => (role === 'site' ? AGENT_SESSION_FRESH_MS / 3 : AGENT_SESSION_FRESH_MS);

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

/** Whether a session of `role` heartbeat within three of its intervals. */
export function isConnected(lastSeenAt: Date, now: number, role: string): boolean {
  return now - lastSeenAt.getTime() < 3 * sessionIntervalMsFor(role);
}
