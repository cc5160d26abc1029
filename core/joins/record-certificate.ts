// Issues a node certificate and records it (NodeCertificate) in the caller's transaction:
// a certificate exists on record exactly when the join or renewal that made it commits.
import type { Tx } from '../../services/db';
import type { NodeIdentity } from '../pki/identity';
import type { IssuedCertificate, NodeCa } from '../../services/pki/node-ca';

export async function recordCertificate(
  tx: Tx,
  ca: NodeCa,
  spkiDer: Uint8Array,
  identity: NodeIdentity,
  validitySeconds: number,
  now: Date,
): Promise<IssuedCertificate> {
  const certificate = await ca.issue(spkiDer, identity, validitySeconds, now);
  await tx.nodeCertificate.create({
    data: {
      serial: certificate.serial,
      nodeId: identity.nodeId,
      role: identity.role,
      siteId: identity.siteId,
      fingerprint: certificate.fingerprint,
      notBefore: certificate.notBefore,
      notAfter: certificate.notAfter,
    },
  });
  return certificate;
}
