// Authenticating an agent by its certificate: one this CA issued (the signature verifies),
// that we recorded (NodeCertificate), unrevoked, within its validity, of a live node.
// Every agent endpoint uses this, so a revoked or expired certificate is refused
// everywhere (UNAUTHENTICATED), and each refusal is a security event.
import type { KeyObject } from 'node:crypto';
import type { NodeCertificate } from '../../generated/prisma-sqlite/client';
import { Prisma, type Db } from '../db';
import { IronflowError } from '../../core/errors';
import { recordRefusal, refusal } from '../joins/refusal';
import type { NodeCa } from './node-ca';
import { queryRows } from '../raw-statements';
import { agentKeyTag } from './key-tag';

export interface AuthenticatedAgent {
  nodeId: string;
  tenantId: string;
  role: string;
  siteId: string | null;
  serial: string;
  notAfter: Date;
  /** The certificate's key (DER SubjectPublicKeyInfo): what a proof of possession is checked against. */
  spkiDer: Uint8Array;
  /** The same key, parsed: what a request's signature is verified with. */
  publicKey: KeyObject;
  /** The key's tag (key-tag.ts): a ramdisk's queue names it. */
  keyTag: string;
}

type CertificateRecord = Pick<NodeCertificate, 'serial' | 'nodeId' | 'role' | 'siteId' | 'notAfter' | 'revokedAt'>;

async function check(db: Db, ca: NodeCa, certificatePem: string, now: Date): Promise<AuthenticatedAgent> {
  let verified;
  try {
    verified = ca.verifyIssued(certificatePem);
  } catch (error) {
    if (error instanceof IronflowError) throw refusal('UNAUTHENTICATED', 'malformed-certificate', 'the certificate is not a PEM CERTIFICATE block');
    throw error;
  }
  if (!verified) throw refusal('UNAUTHENTICATED', 'unknown-issuer', "the certificate was not issued by this control plane's node CA; join again with a token");
  // Raw SQL, as for API credentials (services/credentials.ts): every agent request reads both
  // rows, and Prisma compiling each model query cost more than the rest of the check.
  const [row] = await queryRows<CertificateRecord>(
    db,
    Prisma.sql`SELECT "serial", "nodeId", "role", "siteId", "notAfter", "revokedAt" FROM "NodeCertificate" WHERE "fingerprint" = ${verified.fingerprint}`,
  );
  if (!row) throw refusal('UNAUTHENTICATED', 'unknown-certificate', 'the certificate is not on record; join again with a token');
  const subject = { nodeId: row.nodeId, serial: row.serial };
  if (row.revokedAt)
    throw refusal(
      'UNAUTHENTICATED',
      'certificate-revoked',
      `certificate ${row.serial} of node ${row.nodeId} was revoked; join again with a new token`,
      subject,
    );
  const notAfter = Math.min(row.notAfter.getTime(), verified.notAfter.getTime());
  if (now.getTime() >= notAfter)
    throw refusal(
      'UNAUTHENTICATED',
      'certificate-expired',
      `certificate ${row.serial} of node ${row.nodeId} expired at ${new Date(notAfter).toISOString()}; join again with a new token`,
      subject,
    );
  if (now.getTime() < verified.notBefore.getTime())
    throw refusal(
      'UNAUTHENTICATED',
      'certificate-not-yet-valid',
      `certificate ${row.serial} is not valid before ${verified.notBefore.toISOString()}; check the agent's clock`,
      subject,
    );
  const [node] = await queryRows<{ tenantId: string; deletedAt: Date | null }>(
    db,
    Prisma.sql`SELECT "tenantId", "deletedAt" FROM "Node" WHERE "id" = ${row.nodeId}`,
  );
  if (!node || node.deletedAt) throw refusal('UNAUTHENTICATED', 'node-deleted', `node ${row.nodeId} no longer exists`, subject);
  return {
    nodeId: row.nodeId,
    tenantId: node.tenantId,
    role: row.role,
    siteId: row.siteId,
    serial: row.serial,
    notAfter: new Date(notAfter),
    spkiDer: verified.spkiDer,
    publicKey: verified.publicKey,
    keyTag: agentKeyTag(verified.spkiDer),
  };
}

export async function authenticateAgentCertificate(
  db: Db,
  ca: NodeCa,
  certificatePem: string,
  options: { purpose: string; now?: Date },
): Promise<AuthenticatedAgent> {
  try {
    return await check(db, ca, certificatePem, options.now ?? new Date());
  } catch (error) {
    const details = error instanceof IronflowError ? error.details : {};
    const nodeId = typeof details.nodeId === 'string' ? details.nodeId : undefined;
    const node = nodeId ? await db.node.findUnique({ where: { id: nodeId } }) : null;
    return recordRefusal(db, 'security.agent.refused', error, {
      tenantId: node?.tenantId,
      subjectId: nodeId,
      data: { purpose: options.purpose, serial: details.serial },
    });
  }
}
