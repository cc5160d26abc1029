// Discovery tokens (spec 001, "Booting a machine into the ramdisk"): one fresh single-use
// `discovery` join token per boot entry, bound to its MAC (expectMac), its machine and its
// workflow, valid 900 s. The bearer goes into the secret store under the purpose
// `discovery-token:<tokenId>`; the boot entry carries only that reference, and the site agent
// fetches the bearer for the running step (grantBootSecret). boot.cleanUp revokes the
// workflow's tokens and deletes their stored bearers (releaseBootSecrets).
import { mintBearer } from '../bearer';
import { machineOfRunningStep, refusalTenant, type BmcAccessDeps } from '../bmc-access';
import type { Db } from '../db';
import { appendEvent } from '../events';
import { newId } from '../ids';
import { JOIN_TOKEN_SCHEME } from '../../core/join-token-scheme';
import { recordRefusal, refusal } from '../joins/refusal';
import type { AuthenticatedAgent } from '../pki/authenticate-agent';
import type { BootSecretAnswer, BootSecretRelease, BootSecretRequest } from '../../core/schemas/agent-boot-secret';
import type { SecretStore } from '../secret-store';
import { releaseWorkflowUserData } from '../userdata/release';
import { DISCOVERY_TOKEN_TTL_SECONDS } from '../../core/boot/boot-entry';

export const DISCOVERY_SECRET_PURPOSE = 'discovery-token:';
/** A token with less than this left is not reused for a boot entry sent again. */
const REUSE_MARGIN_MS = 120_000;

export interface DiscoveryTokenFor {
  tenantId: string;
  siteId: string;
  poolId: string | null;
  nodeId: string;
  workflowId: string;
  mac: string;
}

/**
 * The secret-store reference of the MAC's discovery token for this workflow: the live,
 * unused one a previous send of the same entry minted, or a fresh one.
 */
export async function discoveryTokenRef(
  db: Db,
  secrets: SecretStore,
  target: DiscoveryTokenFor,
  now = new Date(),
): Promise<{ tokenId: string; ref: string; minted: boolean }> {
  return db.$transaction(async (tx) => {
    const live = await tx.joinToken.findMany({
      where: {
        role: 'discovery',
        workflowId: target.workflowId,
        nodeId: target.nodeId,
        expectMac: target.mac,
        revokedAt: null,
        usesLeft: { gt: 0 },
        expiresAt: { gt: new Date(now.getTime() + REUSE_MARGIN_MS) },
      },
      orderBy: { createdAt: 'desc' },
    });
    for (const token of live) {
      const stored = await tx.secret.findFirst({ where: { purpose: `${DISCOVERY_SECRET_PURPOSE}${token.id}` } });
      if (stored) return { tokenId: token.id, ref: stored.id, minted: false };
    }
    const id = newId('joinToken');
    const { bearer, secretHash } = mintBearer(JOIN_TOKEN_SCHEME, id);
    const expiresAt = new Date(now.getTime() + DISCOVERY_TOKEN_TTL_SECONDS * 1000);
    await tx.joinToken.create({
      data: {
        id,
        tenantId: target.tenantId,
        siteId: target.siteId,
        poolId: target.poolId,
        nodeId: target.nodeId,
        role: 'discovery',
        secretHash,
        maxUses: 1,
        usesLeft: 1,
        expiresAt,
        expectMac: target.mac,
        workflowId: target.workflowId,
      },
    });
    const ref = await secrets.put(tx, { tenantId: target.tenantId, purpose: `${DISCOVERY_SECRET_PURPOSE}${id}`, value: bearer, expiresAt });
    await appendEvent(tx, {
      tenantId: target.tenantId,
      type: 'security.discovery-token.created',
      subjectId: target.nodeId,
      data: { tokenId: id, mac: target.mac, workflowId: target.workflowId, ref, expiresAt: expiresAt.toISOString() },
    });
    return { tokenId: id, ref, minted: true };
  });
}

/** The bearer of a boot entry's token, for a site agent of the machine's site, during the workflow. */
export async function grantBootSecret(deps: BmcAccessDeps, agent: AuthenticatedAgent, input: BootSecretRequest): Promise<BootSecretAnswer> {
  const subject = { nodeId: input.nodeId, workflowId: input.workflowId, agentNodeId: agent.nodeId, ref: input.ref };
  try {
    const node = await machineOfRunningStep(deps, agent, input);
    const stored = await deps.db.secret.findUnique({ where: { id: input.ref } });
    const tokenId = stored?.purpose.startsWith(DISCOVERY_SECRET_PURPOSE) ? stored.purpose.slice(DISCOVERY_SECRET_PURPOSE.length) : undefined;
    const token = tokenId ? await deps.db.joinToken.findUnique({ where: { id: tokenId } }) : null;
    if (!stored || !token || token.role !== 'discovery' || token.nodeId !== node.id || token.workflowId !== input.workflowId || token.siteId !== agent.siteId) {
      throw refusal('NOT_FOUND', 'boot-secret-unknown', `${input.ref} is not a discovery token of node ${node.id} for workflow ${input.workflowId}`);
    }
    const now = Date.now();
    if (token.revokedAt || token.usesLeft <= 0 || token.expiresAt.getTime() <= now) {
      throw refusal(
        'INVALID_STATE',
        'boot-secret-spent',
        `discovery token ${token.id} is used, revoked or expired; the boot step sends a new entry when it retries`,
      );
    }
    const bearer = await deps.secrets.get(deps.db, stored.id);
    await appendEvent(deps.db, {
      tenantId: node.tenantId,
      type: 'security.boot-secret.granted',
      subjectId: node.id,
      data: { ...subject, tokenId: token.id, siteId: agent.siteId, serial: agent.serial },
    });
    return { token: bearer, expiresAt: token.expiresAt.toISOString() };
  } catch (error) {
    return recordRefusal(deps.db, 'security.boot-secret.refused', error, {
      tenantId: await refusalTenant(deps.db, agent, input.nodeId),
      subjectId: input.nodeId,
      data: { ...subject, siteId: agent.siteId },
    });
  }
}

/** Revokes a workflow's discovery tokens for the machine and deletes every stored bearer of them. */
export async function revokeWorkflowDiscoveryTokens(
  db: Db,
  nodeId: string,
  workflowId: string,
  now = new Date(),
): Promise<{ revoked: number; deleted: number }> {
  return db.$transaction(async (tx) => {
    const tokens = await tx.joinToken.findMany({ where: { role: 'discovery', nodeId, workflowId }, select: { id: true, tenantId: true, revokedAt: true } });
    const live = tokens.filter((t) => !t.revokedAt).map((t) => t.id);
    const revoked = live.length ? (await tx.joinToken.updateMany({ where: { id: { in: live } }, data: { revokedAt: now } })).count : 0;
    const deleted = tokens.length
      ? (await tx.secret.deleteMany({ where: { purpose: { in: tokens.map((t) => `${DISCOVERY_SECRET_PURPOSE}${t.id}`) } } })).count
      : 0;
    const tenantId = tokens[0]?.tenantId;
    if (tenantId && (revoked > 0 || deleted > 0)) {
      await appendEvent(tx, {
        tenantId,
        type: 'security.discovery-token.revoked',
        subjectId: nodeId,
        data: { workflowId, tokenIds: live, secretsDeleted: deleted },
      });
    }
    return { revoked, deleted };
  });
}

/** boot.cleanUp's control-plane half, for a site agent of the machine's own site: the workflow's tokens and stored bearers. */
export async function releaseBootSecrets(db: Db, agent: AuthenticatedAgent, input: BootSecretRelease): Promise<{ revoked: number; deleted: number }> {
  try {
    if (agent.role !== 'site' || !agent.siteId)
      throw refusal('PERMISSION_DENIED', 'not-a-site-agent', `only site agents clean up boot entries; ${agent.nodeId} is a ${agent.role} agent`);
    const node = await db.node.findUnique({ where: { id: input.nodeId }, select: { siteId: true } });
    if (!node || node.siteId !== agent.siteId) throw refusal('NOT_FOUND', 'node-not-at-site', `node ${input.nodeId} not found at site ${agent.siteId}`);
    const discovery = await revokeWorkflowDiscoveryTokens(db, input.nodeId, input.workflowId);
    // The workflow's user data too (a deploy's provisioned token and its sealed document).
    const userData = await releaseWorkflowUserData(db, input.nodeId, input.workflowId);
    return { revoked: discovery.revoked + userData.revoked, deleted: discovery.deleted + userData.deleted };
  } catch (error) {
    return recordRefusal(db, 'security.boot-secret.refused', error, {
      tenantId: await refusalTenant(db, agent, input.nodeId),
      subjectId: input.nodeId,
      data: { nodeId: input.nodeId, workflowId: input.workflowId, agentNodeId: agent.nodeId },
    });
  }
}
