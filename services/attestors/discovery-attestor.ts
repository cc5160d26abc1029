// The discovery attestor (spec 001, "The discovery attestor"): a ramdisk joins with its
// single-use discovery token plus the site agent's signed discovery assertion. It is admitted
// only when all of these hold:
//  - the token is a live, unused `discovery` token, and its expectMac is the asserted MAC;
//  - the assertion is for the token's site and workflow, signed by the key of a `site`
//    certificate of that site (issued by our CA, on record, unrevoked, valid), of the agent
//    that holds the site's live boot lease at exactly the asserted epoch;
//  - the assertion is at most 15 minutes old, not expired, and used for one join only;
//  - the machine's claimed MACs include the asserted MAC, and its product UUID matches when asserted;
//  - the token's workflow still runs and is about the token's machine.
// It then joins as the workflow's node (the machine itself), with role `ramdisk` (a 2 h
// certificate, core/joins/certificate-policy.ts). Approval modes defer joins to an operator.
import { DISCOVERY_ASSERTION_MAX_MS, assertionSignatureValid, decodeSignedAssertion, type DiscoveryAssertion } from '../boot/discovery-assertion';
import type { Tx } from '../db';
import { appendEvent } from '../events';
import { normalizeMac } from '../../core/mac';
import { consumeApproval, DeferredJoin } from '../joins/join-requests';
import { refusal } from '../joins/refusal';
import type { NodeCa } from '../pki/node-ca';
import type { AttestationRequest, Attestor, JoinTokenRecord } from '../../core/attestors/attestor';
import { consumeTokenUse } from './consume-token-use';
import { findNodeById } from '../metal/node-reads';

const CLOCK_SKEW_MS = 60_000;
const ASSERTION_USED_EVENT = 'security.discovery-assertion.used';

const deny = (reason: string, message: string, details: Record<string, unknown> = {}) => refusal('UNAUTHENTICATED', reason, message, details);

async function checkVouchingAgent(
  tx: Tx,
  ca: NodeCa,
  certificatePem: string,
  assertion: DiscoveryAssertion,
  token: JoinTokenRecord,
  now: Date,
): Promise<Uint8Array> {
  let verified;
  try {
    verified = ca.verifyIssued(certificatePem, 'discovery.assertion');
  } catch {
    verified = undefined;
  }
  if (!verified) throw deny('assertion-certificate-unknown', "the assertion is not signed under a certificate of this control plane's node CA");
  const row = await tx.nodeCertificate.findUnique({ where: { fingerprint: verified.fingerprint } });
  if (!row || row.revokedAt) throw deny('assertion-certificate-revoked', "the assertion's site agent certificate is unknown or revoked");
  if (row.role !== 'site' || row.siteId !== token.siteId || row.nodeId !== assertion.agentNodeId) {
    throw deny('assertion-not-by-site-agent', `the assertion is not signed by a site agent of site ${token.siteId}`);
  }
  const notAfter = Math.min(row.notAfter.getTime(), verified.notAfter.getTime());
  if (now.getTime() >= notAfter || now.getTime() < verified.notBefore.getTime())
    throw deny('assertion-certificate-expired', "the assertion's site agent certificate is not valid now");
  return verified.spkiDer;
}

function checkTimes(assertion: DiscoveryAssertion, now: Date): void {
  const issuedAt = Date.parse(assertion.issuedAt);
  const notAfter = Date.parse(assertion.notAfter);
  if (notAfter - issuedAt > DISCOVERY_ASSERTION_MAX_MS) throw deny('assertion-too-long', 'the assertion claims more than 15 minutes of validity');
  if (issuedAt > now.getTime() + CLOCK_SKEW_MS) throw deny('assertion-from-the-future', "the assertion was issued in the future; check the site agent's clock");
  if (now.getTime() >= notAfter || now.getTime() - issuedAt > DISCOVERY_ASSERTION_MAX_MS)
    throw deny('assertion-expired', 'the discovery assertion expired; the machine boots again to get a fresh one');
}

export const discoveryAttestor: Attestor = {
  role: 'discovery',
  async admit(request: AttestationRequest) {
    const { tx, token, csr, now, ca } = request;
    if (!ca) throw new Error('the discovery attestor needs the node CA');
    if (!request.discovery)
      throw deny(
        'discovery-evidence-missing',
        "a discovery join carries the site agent's assertion and the machine's MACs (discovery.assertion, discovery.macs)",
      );
    if (!token.nodeId || !token.workflowId || !token.expectMac)
      throw deny('token-unbound', `discovery token ${token.id} is not bound to a machine, workflow and MAC`);
    const decoded = decodeSignedAssertion(request.discovery.assertion);
    const { assertion } = decoded;

    // The token and the machine's own claims, against the assertion.
    if (assertion.mac !== token.expectMac)
      throw deny('mac-mismatch', `the assertion is for ${assertion.mac}; discovery token ${token.id} is bound to another MAC`, { tokenId: token.id });
    const claimed = request.discovery.macs.map((m) => normalizeMac(m));
    if (!claimed.includes(assertion.mac)) throw deny('mac-not-claimed', `the machine's MACs do not include the asserted ${assertion.mac}`);
    if (assertion.productUuid && request.discovery.productUuid?.toLowerCase() !== assertion.productUuid) {
      throw deny('product-uuid-mismatch', "the machine's product UUID is not the asserted one");
    }
    if (assertion.siteId !== token.siteId) throw deny('site-mismatch', `the assertion is for site ${assertion.siteId}, the token for ${token.siteId}`);
    if (assertion.workflowId !== token.workflowId) throw deny('workflow-mismatch', 'the assertion names another workflow than the token');

    // The vouching agent: its certificate, its signature, its lease at this epoch.
    const spki = await checkVouchingAgent(tx, ca, decoded.certificatePem, assertion, token, now);
    if (!assertionSignatureValid(spki, decoded)) throw deny('assertion-signature', "the assertion's signature does not verify with the site agent's key");
    checkTimes(assertion, now);
    const lease = await tx.bootLease.findUnique({ where: { siteId: token.siteId } });
    const leaseLive = lease?.holderNodeId === assertion.agentNodeId && lease.expiresAt !== null && lease.expiresAt.getTime() > now.getTime();
    if (!leaseLive) throw deny('agent-not-lease-holder', `site agent ${assertion.agentNodeId} does not hold the boot lease of site ${token.siteId}`);
    if (lease.epoch !== assertion.epoch)
      throw deny('stale-epoch', `the assertion's epoch ${assertion.epoch} is not the boot lease's current epoch ${lease.epoch}`);
    if (await tx.event.findFirst({ where: { type: ASSERTION_USED_EVENT, subjectId: assertion.nonce }, select: { id: true } })) {
      throw deny('assertion-used', 'this discovery assertion was already used for a join');
    }

    // The workflow, then the operator's approval when the mode asks for one.
    const runs = request.workflowRuns ? await request.workflowRuns(token.workflowId, token.nodeId) : false;
    const mode = request.discoveryApproval ?? 'never';
    const approval = await consumeApproval(tx, token.id, csr.spkiDer, now);
    if (approval !== 'approved') {
      if (mode === 'always' || (mode === 'unknown-machines' && !runs)) {
        throw new DeferredJoin({
          tenantId: token.tenantId,
          siteId: token.siteId,
          tokenId: token.id,
          nodeId: token.nodeId,
          workflowId: token.workflowId,
          mac: assertion.mac,
          spkiDer: csr.spkiDer,
          reason: mode === 'always' ? 'approval-always' : 'no-running-workflow',
        });
      }
      if (!runs)
        throw refusal(
          'INVALID_STATE',
          'workflow-not-running',
          `workflow ${token.workflowId} of node ${token.nodeId} is not running; a discovery join serves a running workflow only`,
        );
    }

    const node = await findNodeById(tx, token.nodeId);
    if (!node || node.deletedAt || node.siteId !== token.siteId)
      throw refusal('INVALID_STATE', 'node-gone', `node ${token.nodeId} of discovery token ${token.id} is gone`);
    await consumeTokenUse(tx, token, now);
    await appendEvent(tx, {
      tenantId: token.tenantId,
      type: ASSERTION_USED_EVENT,
      subjectId: assertion.nonce,
      data: {
        tokenId: token.id,
        nodeId: node.id,
        agentNodeId: assertion.agentNodeId,
        epoch: assertion.epoch,
        mac: assertion.mac,
        workflowId: assertion.workflowId,
      },
    });
    return { tenantId: node.tenantId, siteId: node.siteId, poolId: node.poolId, nodeId: node.id, newNode: false, role: 'ramdisk' };
  },
};
