// The key types a node may hold: ECDSA P-256 or Ed25519. Signatures are checked with
// node:crypto over the signed bytes, because pkijs's WebCrypto path has no Ed25519.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';

export type NodeKeyAlgorithm = 'ecdsa-p256' | 'ed25519';

/** The algorithm of a SubjectPublicKeyInfo (DER), or undefined for any other key. */
export function nodeKeyAlgorithm(key: KeyObject): NodeKeyAlgorithm | undefined {
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ecdsa-p256';
  return undefined;
}

export function publicKeyFromSpki(spkiDer: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.from(spkiDer), format: 'der', type: 'spki' });
}

const ecdsaHashByOid: Record<string, string> = {
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
};
const ED25519_OID = '1.3.101.112';

/** Checks an X.509-style signature (algorithm OID, DER signature) over `signed` with `key`. */
export function verifyX509Signature(key: KeyObject, algorithmOid: string, signed: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (algorithmOid === ED25519_OID && key.asymmetricKeyType === 'ed25519') return verify(null, signed, key, signature);
    const hash = ecdsaHashByOid[algorithmOid];
    if (hash && key.asymmetricKeyType === 'ec') return verify(hash, signed, key, signature);
    return false;
  } catch {
    return false;
  }
}
