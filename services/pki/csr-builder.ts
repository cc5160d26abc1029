// Building a PKCS#10 CSR for an agent's own key (the parsing side is csr.ts). pkijs signs
// over WebCrypto, so the node:crypto key is imported there for the one signature.
import { createPublicKey, webcrypto, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import { IronflowError } from '../../core/errors';
import { distinguishedName, OID } from './certificate-builder';
import { pki } from './engine';
import { exactBuffer, toPem } from '../../core/pki/pem';

/** A CSR (PEM) for an ECDSA P-256 private key, subject CN=<commonName>. */
export async function buildCsr(privateKey: KeyObject, commonName: string): Promise<string> {
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new IronflowError('INVALID_INPUT', 'an agent key must be ECDSA P-256 (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)');
  }
  const pkijs = pki();
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256' };
  const signingKey = await webcrypto.subtle.importKey('pkcs8', privateKey.export({ format: 'der', type: 'pkcs8' }), algorithm, false, ['sign']);
  const spkiDer = new Uint8Array(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }));
  const csr = new pkijs.CertificationRequest();
  csr.version = 0;
  csr.subject = distinguishedName([[OID.commonName, commonName]]);
  csr.subjectPublicKeyInfo = new pkijs.PublicKeyInfo({ schema: asn1js.fromBER(exactBuffer(spkiDer)).result });
  await csr.sign(signingKey as unknown as Parameters<typeof csr.sign>[0], 'SHA-256');
  return toPem('CERTIFICATE REQUEST', csr.toSchema().toBER(false));
}
