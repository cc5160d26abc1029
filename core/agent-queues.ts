// Where agents' Temporal workers listen, and when an agent's session counts as connected.
// Agents and the provision engine both derive queue names from here.

/** A session is connected while its last heartbeat is younger than this. */
export const AGENT_SESSION_FRESH_MS = 15_000;

export type QueueKind = 'control' | 'site' | 'ramdisk' | 'node';
export const queueKinds = ['control', 'site', 'ramdisk', 'node'] as const satisfies readonly QueueKind[];

export const siteAgentQueue = (siteId: string, agentNodeId: string): string => `site.${siteId}.${agentNodeId}`;
export const ramdiskQueue = (nodeId: string): string => `ramdisk.${nodeId}`;
export const nodeAgentQueue = (nodeId: string): string => `node.${nodeId}`;

export function isConnected(lastSeenAt: Date, now: number = Date.now()): boolean {
  return now - lastSeenAt.getTime() < AGENT_SESSION_FRESH_MS;
}
