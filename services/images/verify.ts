// Image signature checks. The default verifier is offline: the signer allowlists in
// ImageSigner (a tenant's own, and the root tenant's for the platform). Another verifier
// (Sigstore, a KMS) plugs in through the ImageVerifier interface.
import { createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import type { DbOrTx } from '../db';
import { IronflowError } from '../../core/errors';
import { imageSigningInput, type ImageIdentity } from '../../core/images/signing-input';

export type SignerKeyAlgorithm = 'ed25519' | 'ecdsa-p256';

export interface SignerPublicKey {
  key: KeyObject;
  algorithm: SignerKeyAlgorithm;
  /** The key re-exported as SPKI PEM: the form the allowlist stores. */
  spkiPem: string;
}

/** An SPKI PEM public key of a supported algorithm (Ed25519 or ECDSA P-256), else INVALID_INPUT. */
export function parseSignerPublicKey(pem: string, path = 'publicKeyPem'): SignerPublicKey {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new IronflowError('INVALID_INPUT', 'the public key is not a PEM public key; export it with `openssl pkey -pubout`', { path });
  }
  const type = key.asymmetricKeyType;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  let algorithm: SignerKeyAlgorithm;
  if (type === 'ed25519') algorithm = 'ed25519';
  else if (type === 'ec' && curve === 'prime256v1') algorithm = 'ecdsa-p256';
  else throw new IronflowError('INVALID_INPUT', `image signers use Ed25519 or ECDSA P-256 keys; this one is ${type}${curve ? ` (${curve})` : ''}`, { path });
  return { key, algorithm, spkiPem: key.export({ type: 'spki', format: 'pem' }).toString() };
}

/**
 * True when `signatureBase64` signs `message` with this key: Ed25519, or ECDSA P-256 over
 * SHA-256 in either IEEE P1363 (r||s) or DER encoding.
 */
export function signatureMatches(key: SignerPublicKey, message: Buffer, signatureBase64: string): boolean {
  const signature = Buffer.from(signatureBase64, 'base64');
  if (signature.length === 0 || signature.toString('base64') !== signatureBase64) return false;
  try {
    if (key.algorithm === 'ed25519') return cryptoVerify(null, message, key.key, signature);
    if (signature.length === 64 && cryptoVerify('sha256', message, { key: key.key, dsaEncoding: 'ieee-p1363' }, signature)) return true;
    return cryptoVerify('sha256', message, { key: key.key, dsaEncoding: 'der' }, signature);
  } catch {
    return false; // a malformed DER signature throws; it is simply not a valid signature
  }
}

export interface ImageSignatureCheck {
  image: ImageIdentity;
  signerId: string;
  signature: string;
  /** The tenants whose allowlists may vouch, in order of preference. */
  allowlistTenants: readonly string[];
}

export type ImageVerdict = { ok: true; signerTenantId: string } | { ok: false; reason: string };

export interface ImageVerifier {
  verify(check: ImageSignatureCheck): Promise<ImageVerdict>;
}

/** The default verifier: the named signer of one of the allowed tenants, not revoked, and a matching signature. */
export function allowlistVerifier(db: DbOrTx): ImageVerifier {
  return {
    async verify(check) {
      for (const tenantId of check.allowlistTenants) {
        const signer = await db.imageSigner.findUnique({ where: { tenantId_id: { tenantId, id: check.signerId } } });
        if (!signer) continue;
        if (signer.revokedAt) return { ok: false, reason: `signer ${check.signerId} of tenant ${tenantId} was revoked` };
        let key: SignerPublicKey;
        try {
          key = parseSignerPublicKey(signer.publicKeyPem);
        } catch {
          return { ok: false, reason: `signer ${check.signerId} of tenant ${tenantId} has an unusable key` };
        }
        if (!signatureMatches(key, imageSigningInput(check.image), check.signature)) {
          return { ok: false, reason: `the signature does not verify with signer ${check.signerId} of tenant ${tenantId}` };
        }
        return { ok: true, signerTenantId: tenantId };
      }
      return { ok: false, reason: `no signer ${check.signerId} in the allowlist of ${check.allowlistTenants.join(' or ')}` };
    },
  };
}
