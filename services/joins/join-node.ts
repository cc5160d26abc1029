// Join: a join token plus a CSR → a node, its certificate chain, and where its agent finds
// Temporal (the agent gateway, whose certificate chains to the same node CA). The token's
// attestor admits it inside the transaction that creates the node and records the
// certificate, so a token use is consumed exactly when a join succeeds.
import { attestorFor, type Admission, type JoinTokenRecord } from '../attestors';
import type { DiscoveryApproval } from '../../core/attestors/attestor';
import { parseBearer, secretMatches } from '../bearer';
import type { Db } from '../db';
import { appendEvent } from '../events';
import { JOIN_TOKEN_SCHEME } from '../../core/join-token-scheme';
import { parseCsr } from '../pki/csr';
import type { NodeCa } from '../pki/node-ca';
import type { JoinAnswer, JoinInput } from '../../core/schemas/join';
import { agentTaskQueue, validityFor } from '../../core/joins/certificate-policy';
import { signalAgentJoined, type AgentJoinedNotifier } from './agent-joined';
import { DeferredJoin } from './join-requests';
import { recordRefusal, refusal } from './refusal';
import { recordCertificate } from '../../core/joins/record-certificate';
import { agentKeyTag } from '../pki/key-tag';

export interface JoinDeps {
  db: Db;
  ca: NodeCa;
  /** Where agents reach Temporal: the agent gateway's address and certificate name. */
  gateway: { address: string; serverName: string; namespace: string };
  /** For the discovery attestor: whether a workflow runs now and is about a node. */
  workflowRuns?: (workflowId: string, nodeId: string) => Promise<boolean>;
  discoveryApproval?: DiscoveryApproval;
  /** Tells the workflow that minted the token that its machine's agent joined (agentJoined). */
  notifyJoined?: AgentJoinedNotifier;
  /** Wakes a new metal node's lifecycle (an adopted machine's acceptance checks). */
  wakeLifecycle?: (node: { id: string; tenantId: string; siteId: string; provisionState: string | null }) => Promise<void>;
}

async function findToken(db: Db, bearer: string): Promise<JoinTokenRecord> {
  const parsed = parseBearer(JOIN_TOKEN_SCHEME, bearer);
  if (!parsed)
    throw refusal(
      'UNAUTHENTICATED',
      'malformed-token',
      `the join token must look like ${JOIN_TOKEN_SCHEME}_jt_….<secret>, as printed once by site-tokens create`,
    );
  const token = await db.joinToken.findUnique({ where: { id: parsed.id } });
  if (!token || !secretMatches(parsed.secret, token.secretHash)) throw refusal('UNAUTHENTICATED', 'unknown-token', 'unknown join token; ask for a new one');
  return token;
}

/**
 * Best effort, after the join committed: the agent has its identity either way. A wake that
 * fails (Temporal unreachable) is an event; any later verb on the node (retire) wakes it.
 */
async function wakeNewNode(deps: JoinDeps, admission: Admission): Promise<void> {
  const node = { id: admission.nodeId, tenantId: admission.tenantId, siteId: admission.siteId, provisionState: admission.provision?.state ?? null };
  try {
    await deps.wakeLifecycle?.(node);
  } catch (error) {
    await appendEvent(deps.db, {
      tenantId: node.tenantId,
      type: 'node.lifecycle.wake-failed',
      subjectId: node.id,
      data: { state: node.provisionState, message: (error as Error).message.slice(0, 256) },
    }).catch(() => undefined);
  }
}

export async function joinNode(deps: JoinDeps, input: JoinInput): Promise<JoinAnswer> {
  const { db, ca } = deps;
  let token: JoinTokenRecord | undefined;
  try {
    token = await findToken(db, input.token);
    const csr = parseCsr(input.csr);
    const attestor = attestorFor(token.role);
    const found = token;
    const now = new Date();
    const issued = await db.$transaction(async (tx) => {
      const admission = await attestor.admit({
        tx,
        token: found,
        csr,
        now,
        ca,
        discovery: input.discovery,
        workflowRuns: deps.workflowRuns,
        discoveryApproval: deps.discoveryApproval,
        claimedNodeId: input.nodeId,
      });
      if (admission.newNode) {
        const provision = admission.provision
          ? { provisionState: admission.provision.state, workflowId: admission.provision.workflowId, workflowSeq: admission.provision.workflowId ? 1 : 0 }
          : {};
        await tx.node.create({
          data: { id: admission.nodeId, tenantId: admission.tenantId, siteId: admission.siteId, poolId: admission.poolId, role: admission.role, ...provision },
        });
        if (admission.provision) {
          await appendEvent(tx, {
            tenantId: admission.tenantId,
            type: `node.provision.${admission.provision.state}`,
            subjectId: admission.nodeId,
            data: {
              from: null,
              to: admission.provision.state,
              ...(admission.provision.workflowId ? { workflowId: admission.provision.workflowId } : {}),
              tokenId: found.id,
            },
          });
        }
      }
      const identity = { nodeId: admission.nodeId, role: admission.role, siteId: admission.siteId };
      const certificate = await recordCertificate(tx, ca, csr.spkiDer, identity, validityFor(admission.role), now);
      await appendEvent(tx, {
        tenantId: admission.tenantId,
        type: 'node.joined',
        subjectId: admission.nodeId,
        data: {
          role: admission.role,
          siteId: admission.siteId,
          poolId: admission.poolId,
          tokenId: found.id,
          serial: certificate.serial,
          keyAlgorithm: csr.algorithm,
        },
      });
      return { admission, certificate };
    });
    const { admission, certificate } = issued;
    const taskQueue = agentTaskQueue({ ...admission, keyTag: agentKeyTag(csr.spkiDer) });
    await signalAgentJoined(deps.notifyJoined, found, admission, taskQueue);
    if (admission.provision?.workflowId) await wakeNewNode(deps, admission);
    return {
      nodeId: admission.nodeId,
      role: admission.role,
      siteId: admission.siteId,
      certificateChain: [certificate.pem, ca.certificatePem],
      expiresAt: certificate.notAfter.toISOString(),
      temporal: {
        address: deps.gateway.address,
        namespace: deps.gateway.namespace,
        serverName: deps.gateway.serverName,
        taskQueue,
      },
    };
  } catch (error) {
    if (error instanceof DeferredJoin) await error.record(db);
    return recordRefusal(db, 'security.join.refused', error, {
      tenantId: token?.tenantId,
      subjectId: token?.id,
      data: { tokenId: token?.id, siteId: token?.siteId, role: token?.role },
    });
  }
}
