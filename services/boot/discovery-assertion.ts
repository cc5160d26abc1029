// The discovery assertion (spec 001, "The boot server"): a site agent's signed statement
// that it served this MAC its iPXE script for this workflow, at this lease epoch. The site
// agent signs it with its node key under the purpose `discovery-assertion`; the discovery
// attestor checks it. Encoded for a kernel command line (no spaces, no quotes):
//
//   base64url(JSON assertion) "." base64url(DER of the agent's certificate) "." base64url(signature)
//
// The signature covers "ironflow-discovery-assertion-v1\n" + the first field as sent, so
// no re-serialisation can change what was signed.
import { randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { IronflowError } from '../../core/errors';
import { fromPem, toPem } from '../../core/pki/pem';
import { publicKeyFromSpki } from '../pki/node-key';
import { productUuidSchema } from '../../core/boot/boot-entry';
import { macSchema } from '../../core/schemas/common';

/** An assertion is good for at most 15 minutes. */
export const DISCOVERY_ASSERTION_MAX_MS = 15 * 60_000;
/** Bounds what a machine can hand the control plane. */
export const DISCOVERY_ASSERTION_MAX_CHARS = 4096;
const SIGNING_PREFIX = 'ironflow-discovery-assertion-v1\n';

export const discoveryAssertionSchema = z
  .object({
    v: z.literal(1),
    /** Unique per assertion: one join per assertion. */
    nonce: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
    siteId: z.string().min(1).max(64),
    agentNodeId: z.string().min(1).max(64),
    epoch: z.number().int().positive(),
    mac: macSchema,
    ip: z.string().max(64).nullable(),
    productUuid: productUuidSchema.nullable(),
    workflowId: z.string().min(1).max(256),
    issuedAt: z.iso.datetime(),
    notAfter: z.iso.datetime(),
  })
  .strict();
export type DiscoveryAssertion = z.infer<typeof discoveryAssertionSchema>;

export interface DecodedAssertion {
  assertion: DiscoveryAssertion;
  certificatePem: string;
  signature: Buffer;
  /** The exact bytes the signature covers. */
  signedBytes: Buffer;
}

const digestFor = (key: KeyObject): string | null => (key.asymmetricKeyType === 'ed25519' ? null : 'sha256');
const signingInput = (payload: string) => Buffer.from(`${SIGNING_PREFIX}${payload}`, 'utf8');

export const newAssertionNonce = (): string => randomBytes(16).toString('base64url');

/** What the agent signs: not_after at most 15 minutes after issued_at and never past `cap`. */
export function assertionWindow(now: Date, cap: Date): { issuedAt: string; notAfter: string } {
  const notAfter = Math.min(now.getTime() + DISCOVERY_ASSERTION_MAX_MS, cap.getTime());
  return { issuedAt: now.toISOString(), notAfter: new Date(notAfter).toISOString() };
}

export function encodeSignedAssertion(key: KeyObject, certificatePem: string, assertion: DiscoveryAssertion): string {
  const payload = Buffer.from(JSON.stringify(discoveryAssertionSchema.parse(assertion)), 'utf8').toString('base64url');
  const certificate = Buffer.from(fromPem(certificatePem, ['CERTIFICATE'], 'certificate')).toString('base64url');
  const signature = sign(digestFor(key), signingInput(payload), key).toString('base64url');
  return `${payload}.${certificate}.${signature}`;
}

const malformed = (why: string) =>
  new IronflowError('UNAUTHENTICATED', `the discovery assertion is malformed (${why}); boot the machine again from its site agent`, {
    reason: 'assertion-malformed',
  });

/** Parses an encoded assertion, bounded; does not check the signature (see below). */
export function decodeSignedAssertion(encoded: string): DecodedAssertion {
  if (encoded.length > DISCOVERY_ASSERTION_MAX_CHARS) throw malformed(`longer than ${DISCOVERY_ASSERTION_MAX_CHARS} characters`);
  const parts = encoded.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) throw malformed('not three base64url fields');
  const [payload, certificate, signature] = parts as [string, string, string];
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw malformed('the payload is not JSON');
  }
  const parsed = discoveryAssertionSchema.safeParse(document);
  if (!parsed.success) throw malformed(`payload: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`);
  return {
    assertion: parsed.data,
    certificatePem: toPem('CERTIFICATE', Buffer.from(certificate, 'base64url')),
    signature: Buffer.from(signature, 'base64url'),
    signedBytes: signingInput(payload),
  };
}

/** Whether the signature verifies with this key (DER SubjectPublicKeyInfo). */
export function assertionSignatureValid(spkiDer: Uint8Array, decoded: DecodedAssertion): boolean {
  try {
    const key = publicKeyFromSpki(spkiDer);
    return verify(digestFor(key), decoded.signedBytes, key, decoded.signature);
  } catch {
    return false;
  }
}
