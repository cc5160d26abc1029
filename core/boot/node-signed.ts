// Node-signed results (disk.wipe, diag.dcgm): the machine's agent signs what it reports
// with its node key, so the control plane can tell a result from this machine's agent from
// anything else that passed through. Signed text: the purpose, a newline, the JSON result.
import { createPublicKey, sign, verify, X509Certificate, type KeyObject } from 'node:crypto';
import type { JsonObject } from '../plan';

export interface NodeSigned {
  /** The result as signed: a JSON text, so nothing re-serialises it. */
  payload: string;
  /** base64 signature by the node key over `${purpose}\n${payload}`. */
  signature: string;
  purpose: string;
}

const digestFor = (key: KeyObject): string | null => (key.asymmetricKeyType === 'ed25519' ? null : 'sha256');

export function signNodeResult(key: KeyObject, purpose: string, result: JsonObject): NodeSigned {
  const payload = JSON.stringify(result);
  return { payload, purpose, signature: sign(digestFor(key), Buffer.from(`${purpose}\n${payload}`, 'utf8'), key).toString('base64') };
}

/** Checks a node-signed result against the certificate (PEM) of the agent that made it. */
export function nodeSignatureValid(certificatePemOrSpki: string | Uint8Array, signed: NodeSigned): boolean {
  try {
    const key =
      typeof certificatePemOrSpki === 'string'
        ? new X509Certificate(certificatePemOrSpki).publicKey
        : createPublicKey({ key: Buffer.from(certificatePemOrSpki), format: 'der', type: 'spki' });
    return verify(digestFor(key), Buffer.from(`${signed.purpose}\n${signed.payload}`, 'utf8'), key, Buffer.from(signed.signature, 'base64'));
  } catch {
    return false;
  }
}
