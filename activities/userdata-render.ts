// userdata.render (spec 003 "User data"): mints a single-use `provisioned` join token for the
// node's pool and site, renders the profile's user data with it, seals the document in the
// secret store under `userdata:<workflowId>`, and returns references only. A re-run (a
// retry after a crash) mints a new token and revokes the earlier unused ones of this
// workflow, so an abandoned rendering never stays a second way in.
import { z } from 'zod';
import { mintBearer } from '../services/bearer';
import { IronflowError, parseWith } from '../core/errors';
import { appendEvent } from '../services/events';
import { newId } from '../services/ids';
import { JOIN_TOKEN_SCHEME } from '../core/join-token-scheme';
import type { StepInput } from '../core/plan';
import { renderUserData } from '../services/userdata/render';
import { requireAgentDownload } from '../core/userdata/settings';
import type { ActivityDeps } from './deps';
import { userDataSecretPurpose } from '../services/userdata/grant';
import { asStep } from './step-failure';

export const PROVISIONED_TOKEN_ROLE = 'provisioned';

const renderWith = z
  .object({
    kind: z.string().min(1).max(32).optional(),
    template: z.string().min(1).max(128).optional(),
    tokenTtlSeconds: z.number().int().min(300).max(86_400).optional(),
  })
  .strict();

export interface UserDataRendered {
  userDataRef: string;
  kind: string;
  joinTokenId: string;
}

export function createUserDataActivities(deps: ActivityDeps) {
  return {
    async 'userdata.render'(input: StepInput): Promise<UserDataRendered> {
      return asStep(async () => {
        const spec = parseWith(renderWith, input.with, 'INVALID_CONFIG');
        if (!spec.kind)
          throw new IronflowError('INVALID_CONFIG', 'userdata.render has nothing to render: give the profile a userData section ({ kind, template })', {
            path: `${input.stepKey}.with.kind`,
          });
        const settings = deps.config.userData;
        requireAgentDownload(settings);
        const node = await deps.db.node.findUnique({ where: { id: input.target.nodeId } });
        if (!node || node.deletedAt) throw new IronflowError('NOT_FOUND', `node ${input.target.nodeId} not found`, { id: input.target.nodeId });

        const joinTokenId = newId('joinToken');
        const { bearer, secretHash } = mintBearer(JOIN_TOKEN_SCHEME, joinTokenId);
        // Rendered before anything is stored: a template problem leaves no token behind.
        const rendered = renderUserData(
          spec.kind,
          {
            nodeId: node.id,
            joinToken: bearer,
            controlPlaneUrl: settings.controlPlaneUrl,
            agentUrl: settings.agentUrl,
            agentSha256: settings.agentSha256,
            ...(settings.pins ? { pins: settings.pins } : {}),
          },
          { ...(spec.template ? { template: spec.template } : {}), ...(settings.templates ? { templates: settings.templates } : {}) },
        );
        const now = new Date();
        const expiresAt = new Date(now.getTime() + (spec.tokenTtlSeconds ?? settings.tokenTtlSeconds) * 1000);
        const purpose = userDataSecretPurpose(input.workflowId);

        return deps.db.$transaction(async (tx) => {
          const earlier = await tx.joinToken.updateMany({
            where: { role: PROVISIONED_TOKEN_ROLE, nodeId: node.id, workflowId: input.workflowId, revokedAt: null },
            data: { revokedAt: now },
          });
          await tx.secret.deleteMany({ where: { purpose } });
          await tx.joinToken.create({
            data: {
              id: joinTokenId,
              tenantId: node.tenantId,
              siteId: node.siteId,
              poolId: node.poolId,
              nodeId: node.id,
              role: PROVISIONED_TOKEN_ROLE,
              secretHash,
              maxUses: 1,
              usesLeft: 1,
              expiresAt,
              workflowId: input.workflowId,
            },
          });
          const userDataRef = await deps.secrets.put(tx, { tenantId: node.tenantId, purpose, value: rendered.document, expiresAt });
          await appendEvent(tx, {
            tenantId: node.tenantId,
            type: 'node.userdata.rendered',
            subjectId: node.id,
            data: {
              workflowId: input.workflowId,
              kind: rendered.kind,
              template: rendered.template,
              joinTokenId,
              userDataRef,
              expiresAt: expiresAt.toISOString(),
              revokedEarlier: earlier.count,
            },
          });
          return { userDataRef, kind: rendered.kind, joinTokenId };
        });
      });
    },
  };
}
export type UserDataActivities = ReturnType<typeof createUserDataActivities>;
