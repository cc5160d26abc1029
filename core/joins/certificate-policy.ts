// How long each role's certificate lives, and which Temporal task queue its agent serves.
import { nodeAgentQueue, ramdiskQueue, siteAgentQueue } from '../agent-queues';

export const certificateValiditySeconds: Record<string, number> = {
  site: 24 * 3600,
  ramdisk: 2 * 3600,
  node: 24 * 3600,
};

export function validityFor(role: string): number {
  return certificateValiditySeconds[role] ?? 3600;
}

/** The queue an agent of `role` serves; a ramdisk's is its boot's own, named by its key's tag (services/pki/key-tag.ts). */
export function agentTaskQueue(agent: { role: string; siteId: string | null; nodeId: string; keyTag: string }): string {
  if (agent.role === 'site') return siteAgentQueue(agent.siteId ?? '', agent.nodeId);
  if (agent.role === 'ramdisk') return ramdiskQueue(agent.nodeId, agent.keyTag);
  if (agent.role === 'node') return nodeAgentQueue(agent.nodeId);
  return `${agent.role}.${agent.nodeId}`;
}
