// How a node's identity is written into its certificate: subject CN=<nodeId>, OU=<role>,
// L=<siteId>, and a URI SAN that names all three in one readable string.
export interface NodeIdentity {
  nodeId: string;
  role: string;
  siteId: string | null;
}

const URI_PREFIX = 'urn:ironflow:node:';

export function identityUri(identity: NodeIdentity): string {
  return `${URI_PREFIX}${identity.nodeId}:role:${identity.role}:site:${identity.siteId ?? '-'}`;
}

export function parseIdentityUri(uri: string): NodeIdentity | undefined {
  const match = /^urn:ironflow:node:([a-z0-9_]+):role:([a-z0-9-]+):site:([a-z0-9_]+|-)$/.exec(uri);
  if (!match) return undefined;
  return { nodeId: match[1] as string, role: match[2] as string, siteId: match[3] === '-' ? null : (match[3] as string) };
}
