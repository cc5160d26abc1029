// The destructive-batch quorum (docs/quorum.md): a tenant's policy (tenant admins), its
// batches (read by approvers, approved with their own signatures); agents report the commands
// they refused through the agent API (agent-quorum-refusals.ts). The signature is the
// authority, not the credential that carries it: any reader of the tenant may hand in an
// approver's signature.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { approveBatch, batchView, findBatch, listBatches, nodeIdsOf, refuseBatch } from '../../services/quorum/batch-store';
import { findQuorumPolicy, quorumPolicyView, removeQuorumPolicy, setQuorumPolicy } from '../../services/quorum/policy-store';
import { notifyQuorumBatch } from '../../services/temporal/senders';
import { notFound } from '../../core/errors';
import { tenantQuerySchema } from '../../core/schemas/common';
import {
  batchApprovalSchema,
  batchDetailSchema,
  batchListQuerySchema,
  batchListSchema,
  batchParamsSchema,
  batchRefusalSchema,
  batchViewSchema,
  quorumPolicySchema,
  quorumPolicySetSchema,
} from '../../services/schemas/quorum';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

const tags = ['quorum'];

export const quorumRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  /** The workflow a batch serves looks at it now (it also looks again on its own); a bulk run's node workflows look on their own. */
  const wakeSubject = async (row: { id: string; kind: string; subject: string }, log: { warn: (fields: object, message: string) => void }) => {
    if (row.kind === 'bulk') return;
    await notifyQuorumBatch(ctx.temporal, row.subject).catch((err: unknown) => {
      log.warn({ batchId: row.id, error: (err as Error).message }, 'could not signal the batch’s workflow; it looks again on its own');
    });
  };

  app.put('/v1/quorum/policy', { schema: { tags, body: quorumPolicySetSchema, response: { 200: quorumPolicySchema } } }, async (request) => {
    const principal = authorize(request, 'compute:credentials:manage', request.body.tenantId);
    return setQuorumPolicy(ctx.db, request.body, principal.credentialId);
  });

  app.get('/v1/quorum/policy', { schema: { tags, querystring: tenantQuerySchema, response: { 200: quorumPolicySchema } } }, async (request) => {
    authorize(request, 'compute:nodes:read', request.query.tenantId);
    const row = await findQuorumPolicy(ctx.db, request.query.tenantId);
    if (!row) throw notFound('quorum policy of tenant', request.query.tenantId);
    return quorumPolicyView(row);
  });

  app.delete('/v1/quorum/policy', { schema: { tags, querystring: tenantQuerySchema, response: { 204: z.null() } } }, async (request, reply) => {
    const principal = authorize(request, 'compute:credentials:manage', request.query.tenantId);
    await removeQuorumPolicy(ctx.db, request.query.tenantId, principal.credentialId);
    return reply.status(204).send(null);
  });

  app.get('/v1/quorum/batches', { schema: { tags, querystring: batchListQuerySchema, response: { 200: batchListSchema } } }, async (request) => {
    const q = request.query;
    authorize(request, 'compute:nodes:read', q.tenantId);
    return listBatches(ctx.db, { tenantId: q.tenantId, limit: q.limit, ...(q.status ? { status: q.status } : {}), ...(q.cursor ? { cursor: q.cursor } : {}) });
  });

  app.get(
    '/v1/quorum/batches/:batchId',
    { schema: { tags, params: batchParamsSchema, querystring: tenantQuerySchema, response: { 200: batchDetailSchema } } },
    async (request) => {
      authorize(request, 'compute:nodes:read', request.query.tenantId);
      const row = await findBatch(ctx.db, request.query.tenantId, request.params.batchId);
      return { ...(await batchView(ctx.db, row)), nodeIds: nodeIdsOf(row) };
    },
  );

  app.post(
    '/v1/quorum/batches/:batchId/approvals',
    { schema: { tags, params: batchParamsSchema, body: batchApprovalSchema, response: { 200: batchViewSchema } } },
    async (request) => {
      const b = request.body;
      const principal = authorize(request, 'compute:nodes:read', b.tenantId);
      const row = await approveBatch(
        ctx.db,
        { tenantId: b.tenantId, batchId: request.params.batchId, approverId: b.approverId, signature: b.signature },
        principal.credentialId,
      );
      await wakeSubject(row, request.log);
      return batchView(ctx.db, row);
    },
  );

  app.post(
    '/v1/quorum/batches/:batchId/refusals',
    { schema: { tags, params: batchParamsSchema, body: batchRefusalSchema, response: { 200: batchViewSchema } } },
    async (request) => {
      const b = request.body;
      const principal = authorize(request, 'compute:nodes:read', b.tenantId);
      const row = await refuseBatch(
        ctx.db,
        { tenantId: b.tenantId, batchId: request.params.batchId, approverId: b.approverId, signature: b.signature, reason: b.reason },
        principal.credentialId,
      );
      await wakeSubject(row, request.log);
      return batchView(ctx.db, row);
    },
  );
};
