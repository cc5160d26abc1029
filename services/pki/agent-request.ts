// Agents authenticate each API request with their certificate and a signature by its key
// over the request (proof of possession; a certificate alone is public). The signed text:
//
//   ironflow-agent-request-v2\n<METHOD>\n<path?query>\n<timestamp ms>\n<nonce>\n<sha256 hex of body>
//
// Headers: x-ironflow-agent-certificate (base64 of the leaf PEM), x-ironflow-agent-timestamp,
// x-ironflow-agent-nonce (a random request id: the control plane takes each once only, see
// services/pki/agent-request-nonces.ts), x-ironflow-agent-signature (base64). ECDSA P-256 signs over
// SHA-256 (DER); Ed25519 plain.
import { createHash, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { IronflowError } from '../../core/errors';

export const AGENT_HEADERS = {
  certificate: 'x-ironflow-agent-certificate',
  timestamp: 'x-ironflow-agent-timestamp',
  nonce: 'x-ironflow-agent-nonce',
  signature: 'x-ironflow-agent-signature',
} as const;

/** How far an agent's clock and the request's age may be from ours. */
export const AGENT_REQUEST_MAX_SKEW_MS = 60_000;

/** 128 random bits, base64url: what the agent sends; what the control plane accepts. */
const NONCE_PATTERN = /^[A-Za-z0-9_-]{22,64}$/;

export function agentRequestSigningInput(method: string, pathAndQuery: string, timestampMs: number, nonce: string, body: string): Buffer {
  const bodyDigest = createHash('sha256').update(body, 'utf8').digest('hex');
  return Buffer.from(`ironflow-agent-request-v2\n${method.toUpperCase()}\n${pathAndQuery}\n${timestampMs}\n${nonce}\n${bodyDigest}`, 'utf8');
}

const digestFor = (key: KeyObject): string | null => (key.asymmetricKeyType === 'ed25519' ? null : 'sha256');

export function signAgentRequest(
  key: KeyObject,
  certificatePem: string,
  request: { method: string; pathAndQuery: string; body: string; now?: number },
): Record<string, string> {
  const timestamp = request.now ?? Date.now();
  const nonce = randomBytes(16).toString('base64url');
  const signature = sign(digestFor(key), agentRequestSigningInput(request.method, request.pathAndQuery, timestamp, nonce, request.body), key);
  return {
    [AGENT_HEADERS.certificate]: Buffer.from(certificatePem, 'utf8').toString('base64'),
    [AGENT_HEADERS.timestamp]: String(timestamp),
    [AGENT_HEADERS.nonce]: nonce,
    [AGENT_HEADERS.signature]: signature.toString('base64'),
  };
}

export interface SignedAgentRequest {
  certificatePem: string;
  timestampMs: number;
  /** The request's id: once-only while the timestamp is inside the skew window. */
  nonce: string;
  signature: Buffer;
}

const unauthenticated = (message: string) => new IronflowError('UNAUTHENTICATED', message, { reason: 'agent-signature' });

/** Reads the four headers, bounded in size, or refuses with what is missing. */
export function readAgentHeaders(headers: Record<string, string | string[] | undefined>): SignedAgentRequest {
  const get = (name: string, max: number): string => {
    const value = headers[name];
    if (typeof value !== 'string' || value.length === 0) throw unauthenticated(`missing ${name}: agents sign each request with their certificate's key`);
    if (value.length > max) throw unauthenticated(`${name} is longer than ${max} bytes`);
    return value;
  };
  const certificatePem = Buffer.from(get(AGENT_HEADERS.certificate, 16_384), 'base64').toString('utf8');
  const timestampMs = Number(get(AGENT_HEADERS.timestamp, 20));
  if (!Number.isSafeInteger(timestampMs)) throw unauthenticated(`${AGENT_HEADERS.timestamp} is not milliseconds since the epoch`);
  const nonce = get(AGENT_HEADERS.nonce, 64);
  if (!NONCE_PATTERN.test(nonce)) throw unauthenticated(`${AGENT_HEADERS.nonce} is not a random request id (22 to 64 base64url characters)`);
  return { certificatePem, timestampMs, nonce, signature: Buffer.from(get(AGENT_HEADERS.signature, 512), 'base64') };
}

/** Checks the signature by the certificate's key and the request's age. */
export function verifyAgentRequest(
  key: KeyObject,
  signed: SignedAgentRequest,
  request: { method: string; pathAndQuery: string; body: string; now?: number },
): void {
  const now = request.now ?? Date.now();
  if (Math.abs(now - signed.timestampMs) > AGENT_REQUEST_MAX_SKEW_MS) {
    throw unauthenticated(
      `the request's timestamp is more than ${AGENT_REQUEST_MAX_SKEW_MS / 1000} s from the control plane's clock; check the agent's clock (NTP)`,
    );
  }
  const input = agentRequestSigningInput(request.method, request.pathAndQuery, signed.timestampMs, signed.nonce, request.body);
  let ok = false;
  try {
    ok = verify(digestFor(key), input, key, signed.signature);
  } catch {
    ok = false;
  }
  if (!ok) throw unauthenticated("the request signature does not verify with the certificate's key");
}
