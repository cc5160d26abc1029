// How long each role's certificate lives, and which Temporal task queue its agent serves.
export const certificateValiditySeconds: Record<string, number> = {
  site: 24 * 3600,
  ramdisk: 2 * 3600,
  node: 24 * 3600,
};

export function validityFor(role: string): number {
  return certificateValiditySeconds[role] ?? 3600;
}

export function agentTaskQueue(role: string, siteId: string | null, nodeId: string): string {
  if (role === 'site') return `site.${siteId}.${nodeId}`;
  return `${role}.${nodeId}`;
}
