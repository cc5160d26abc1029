// PKCS#10 certificate signing requests from agents: parsed with pkijs, the key limited to
// ECDSA P-256 or Ed25519, and the self-signature checked (the agent holds the key).
import type { KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import { IronflowError } from '../../core/errors';
import { pki } from './engine';
import { nodeKeyAlgorithm, publicKeyFromSpki, verifyX509Signature, type NodeKeyAlgorithm } from './node-key';
import { exactBuffer, fromPem } from '../../core/pki/pem';

export interface ParsedCsr {
  /** The requested key, as the DER SubjectPublicKeyInfo (what goes into the certificate). */
  spkiDer: Uint8Array;
  publicKey: KeyObject;
  algorithm: NodeKeyAlgorithm;
}

export function parseCsr(pem: string, path = 'csr'): ParsedCsr {
  const pkijs = pki();
  const der = fromPem(pem, ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'], path);
  let csr: InstanceType<typeof pkijs.CertificationRequest>;
  try {
    const asn = asn1js.fromBER(exactBuffer(der));
    if (asn.offset === -1) throw new Error('not DER');
    csr = new pkijs.CertificationRequest({ schema: asn.result });
  } catch {
    throw new IronflowError(
      'INVALID_INPUT',
      `${path}: not a PKCS#10 certificate signing request (make one with: openssl req -new -key node.key -subj /CN=agent)`,
      { path },
    );
  }
  const spkiDer = new Uint8Array(csr.subjectPublicKeyInfo.toSchema().toBER(false));
  let publicKey: KeyObject;
  try {
    publicKey = publicKeyFromSpki(spkiDer);
  } catch {
    throw new IronflowError('INVALID_INPUT', `${path}: the request's public key does not parse`, { path });
  }
  const algorithm = nodeKeyAlgorithm(publicKey);
  if (!algorithm) {
    throw new IronflowError('INVALID_INPUT', `${path}: the key must be ECDSA P-256 or Ed25519 (openssl genpkey -algorithm ed25519)`, { path });
  }
  const signature = new Uint8Array(csr.signatureValue.valueBlock.valueHexView);
  if (!verifyX509Signature(publicKey, csr.signatureAlgorithm.algorithmId, csr.tbsView, signature)) {
    throw new IronflowError('INVALID_INPUT', `${path}: the request's signature does not verify with its own key`, { path });
  }
  return { spkiDer, publicKey, algorithm };
}
