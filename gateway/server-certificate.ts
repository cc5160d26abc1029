// The gateway's TLS certificate: a fresh P-256 key each start, signed by the node CA that
// agents already hold (the last certificate of their join chain), so an agent pins the CA
// it joined with and needs nothing else to trust the gateway.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { NodeCa } from '../services/pki/node-ca';

/** The name agents verify the gateway's certificate against (they dial an address, not this name). */
export const GATEWAY_SERVER_NAME = 'gateway.ironflow.internal';
const VALIDITY_SECONDS = 30 * 24 * 3600;

interface GatewayTlsMaterial {
  certificatePem: string;
  privateKeyPem: string;
}

export async function issueGatewayCertificate(ca: NodeCa): Promise<GatewayTlsMaterial> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spkiDer = new Uint8Array(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }));
  const issued = await ca.issueServer(spkiDer, [GATEWAY_SERVER_NAME], VALIDITY_SECONDS);
  return { certificatePem: issued.pem, privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
}
