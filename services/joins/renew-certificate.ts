// Renewal without a token: the agent shows its current certificate and a new CSR signed
// by the same key. The CSR's self-signature proves it holds that key (we have no mTLS
// yet), so a copied certificate alone renews nothing.
import { timingSafeEqual } from 'node:crypto';
import type { Db } from '../db';
import { appendEvent } from '../events';
import { authenticateAgentCertificate } from '../pki/authenticate-agent';
import { parseCsr } from '../pki/csr';
import type { NodeCa } from '../pki/node-ca';
import type { RenewInput } from '../../core/schemas/join';
import { validityFor } from '../../core/joins/certificate-policy';
import { recordCertificate } from '../../core/joins/record-certificate';
import { recordRefusal, refusal } from './refusal';

export async function renewCertificate(db: Db, ca: NodeCa, input: RenewInput) {
  const agent = await authenticateAgentCertificate(db, ca, input.certificate, { purpose: 'renew' });
  try {
    const csr = parseCsr(input.csr);
    const sameKey = csr.spkiDer.length === agent.spkiDer.length && timingSafeEqual(csr.spkiDer, agent.spkiDer);
    if (!sameKey) {
      throw refusal(
        'UNAUTHENTICATED',
        'key-mismatch',
        'the renewal CSR must be signed by the key of the current certificate (openssl req -new -key <the agent key>)',
        { nodeId: agent.nodeId },
      );
    }
    const now = new Date();
    const certificate = await db.$transaction(async (tx) => {
      const identity = { nodeId: agent.nodeId, role: agent.role, siteId: agent.siteId };
      const issued = await recordCertificate(tx, ca, csr.spkiDer, identity, validityFor(agent.role), now);
      await appendEvent(tx, {
        tenantId: agent.tenantId,
        type: 'node.certificate.renewed',
        subjectId: agent.nodeId,
        data: { previousSerial: agent.serial, serial: issued.serial },
      });
      return issued;
    });
    return {
      nodeId: agent.nodeId,
      role: agent.role,
      siteId: agent.siteId,
      certificateChain: [certificate.pem, ca.certificatePem],
      expiresAt: certificate.notAfter.toISOString(),
    };
  } catch (error) {
    return recordRefusal(db, 'security.agent.refused', error, {
      tenantId: agent.tenantId,
      subjectId: agent.nodeId,
      data: { purpose: 'renew', serial: agent.serial },
    });
  }
}
