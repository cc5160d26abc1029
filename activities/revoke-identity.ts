// metal.revokeIdentity (core/steps/metal.ts), retire's last word: every certificate of the
// machine revoked, its tokens revoked, its BMC credentials forgotten, in one transaction.
import { appendEvent } from '../services/events';
import { IronflowError } from '../core/errors';
import type { StepInput } from '../core/plan';
import type { ActivityDeps } from './deps';
import { asStep } from './step-failure';

export function createRevokeIdentityActivities(deps: ActivityDeps) {
  return {
    async 'metal.revokeIdentity'(input: StepInput): Promise<{ revokedCertificates: number; credentialsForgotten: boolean }> {
      return asStep(() =>
        deps.db.$transaction(async (tx) => {
          const now = new Date();
          const node = await tx.node.findUnique({ where: { id: input.target.nodeId } });
          if (!node) throw new IronflowError('NOT_FOUND', `node ${input.target.nodeId} not found`, {});
          const certs = await tx.nodeCertificate.updateMany({ where: { nodeId: node.id, revokedAt: null }, data: { revokedAt: now } });
          await tx.joinToken.updateMany({ where: { nodeId: node.id, revokedAt: null }, data: { revokedAt: now } });
          const ref = node.bmcCredentialsRef;
          if (ref) await tx.secret.deleteMany({ where: { id: ref } });
          await tx.node.update({ where: { id: node.id }, data: { bmcCredentialsRef: null } });
          await appendEvent(tx, {
            tenantId: node.tenantId,
            type: 'node.identity.revoked',
            subjectId: node.id,
            data: { workflowId: input.workflowId, certificates: certs.count, credentialsForgotten: ref !== null },
          });
          return { revokedCertificates: certs.count, credentialsForgotten: ref !== null };
        }),
      );
    },
  };
}
