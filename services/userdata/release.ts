// When a deploy workflow ends (boot.cleanUp's control half): its provisioned join token, if
// the installed OS never used it, is revoked, and the sealed user data (which holds that
// bearer) is deleted. Tokens never outlive their workflow; a joined OS no longer needs either.
import type { Db } from '../db';
import { appendEvent } from '../events';
import { userDataSecretPurpose } from './grant';

export async function releaseWorkflowUserData(db: Db, nodeId: string, workflowId: string, now = new Date()): Promise<{ revoked: number; deleted: number }> {
  return db.$transaction(async (tx) => {
    const live = await tx.joinToken.findMany({
      where: { role: 'provisioned', nodeId, workflowId, revokedAt: null, usesLeft: { gt: 0 } },
      select: { id: true, tenantId: true },
    });
    const revoked = live.length ? (await tx.joinToken.updateMany({ where: { id: { in: live.map((t) => t.id) } }, data: { revokedAt: now } })).count : 0;
    const stored = await tx.secret.findMany({ where: { purpose: userDataSecretPurpose(workflowId) }, select: { id: true, tenantId: true } });
    const deleted = stored.length ? (await tx.secret.deleteMany({ where: { id: { in: stored.map((s) => s.id) } } })).count : 0;
    const tenantId = live[0]?.tenantId ?? stored[0]?.tenantId;
    if (tenantId && (revoked > 0 || deleted > 0)) {
      await appendEvent(tx, {
        tenantId,
        type: 'security.userdata.released',
        subjectId: nodeId,
        data: { workflowId, tokenIds: live.map((t) => t.id), secretsDeleted: deleted },
      });
    }
    return { revoked, deleted };
  });
}
