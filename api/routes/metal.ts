// metal.*: enroll, get, list, the verbs, power, confirm-mac (services/metal/confirm-mac.ts) and bulk (its run, read and cancel). Every answer is the
// node's metal view (never credentials). Verbs are decided as compute:nodes:provision on the
// node, enroll and bulk on the pool, power as compute:nodes:power.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Principal } from '../../services/credentials';
import { cancelBulk, readBulkPage, startBulk } from '../../services/metal/bulk';
import { confirmMacAndWake } from '../../services/metal/confirm-mac';
import { enrollNode } from '../../services/metal/enroll';
import { wakeLifecycle } from '../../services/temporal/starters';
import { POWER_RUN_STATE, recordPowerRequest } from '../../services/metal/power';
import { findMetalNodeView, listMetalNodes } from '../../services/metal/node-reads';
import { applyVerb, type MetalDeps, type VerbArgs } from '../../services/metal/verbs';
import { metalView } from '../../core/metal/view';
import { provisionVerbNamed } from '../../core/provision-states';
import { tenantQuerySchema } from '../../core/schemas/common';
import {
  metalAbortSchema,
  metalBulkCancelSchema,
  metalBulkPageSchema,
  metalBulkParamsSchema,
  metalBulkQuerySchema,
  metalBulkRunSchema,
  metalBulkSchema,
  metalConfirmMacSchema,
  metalDeploySchema,
  metalEnrollSchema,
  metalListQuerySchema,
  metalNodeListSchema,
  metalNodeParamsSchema,
  metalNodeSchema,
  metalPowerSchema,
  metalUndeploySchema,
  metalVerbSchema,
  type BulkVerb,
} from '../../core/schemas/metal';
import { requestBatch } from '../../services/quorum/batch-store';
import { bulkVerbChain } from '../../profiles/bulk-chain';
import { startProvision } from '../../profiles/launch';
import { resolveProfile } from '../../profiles/store';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

const tags = ['metal'];
const plainVerbs = ['manage', 'inspect', 'provide', 'rescue', 'unrescue', 'recover', 'retire'] as const;

export const metalRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  const deps: MetalDeps = {
    db: ctx.db,
    temporal: ctx.temporal,
    controlQueue: ctx.config.controlQueue,
    resolveDeployProfile: async (db, tenantId, id, version) => (await resolveProfile(db, tenantId, id, version)).document as { target: string },
  };
  // The actor (credential:<id>) goes into the events a verb writes besides its move (maintenance held or cleared).
  const verb = async (principal: Principal, tenantId: string, nodeId: string, version: number | undefined, args: VerbArgs) =>
    metalView(await applyVerb(deps, { tenantId, nodeId, version, actor: `credential:${principal.credentialId}` }, args));

  app.post('/v1/metal/nodes', { schema: { tags, body: metalEnrollSchema, response: { 201: metalNodeSchema } } }, async (request, reply) => {
    authorize(request, 'compute:nodes:provision', request.body.tenantId);
    const node = await enrollNode(ctx.db, ctx.secrets, request.body);
    await wakeLifecycle(ctx.temporal, ctx.config.controlQueue, node);
    return reply.status(201).send(metalView(node));
  });

  app.get(
    '/v1/metal/nodes/:nodeId',
    { schema: { tags, params: metalNodeParamsSchema, querystring: tenantQuerySchema, response: { 200: metalNodeSchema } } },
    async (request) => {
      authorize(request, 'compute:nodes:read', request.query.tenantId);
      return metalView(await findMetalNodeView(ctx.db, request.query.tenantId, request.params.nodeId));
    },
  );

  app.get('/v1/metal/nodes', { schema: { tags, querystring: metalListQuerySchema, response: { 200: metalNodeListSchema } } }, async (request) => {
    const q = request.query;
    authorize(request, 'compute:nodes:read', q.tenantId);
    const page = await listMetalNodes(ctx.db, q);
    return { nodes: page.nodes.map(metalView), nextCursor: page.nextCursor };
  });

  for (const name of plainVerbs) {
    app.post(
      `/v1/metal/nodes/:nodeId/${name}`,
      { schema: { tags, params: metalNodeParamsSchema, body: metalVerbSchema, response: { 200: metalNodeSchema } } },
      async (request) => {
        const principal = authorize(request, 'compute:nodes:provision', request.body.tenantId);
        return verb(principal, request.body.tenantId, request.params.nodeId, request.body.version, { verb: name });
      },
    );
  }

  app.post(
    '/v1/metal/nodes/:nodeId/deploy',
    { schema: { tags, params: metalNodeParamsSchema, body: metalDeploySchema, response: { 200: metalNodeSchema } } },
    async (request) => {
      const b = request.body;
      const principal = authorize(request, 'compute:nodes:provision', b.tenantId);
      return verb(principal, b.tenantId, request.params.nodeId, b.version, { verb: 'deploy', profileId: b.profileId, profileVersion: b.profileVersion });
    },
  );

  app.post(
    '/v1/metal/nodes/:nodeId/undeploy',
    { schema: { tags, params: metalNodeParamsSchema, body: metalUndeploySchema, response: { 200: metalNodeSchema } } },
    async (request) => {
      const principal = authorize(request, 'compute:nodes:provision', request.body.tenantId);
      return verb(principal, request.body.tenantId, request.params.nodeId, request.body.version, { verb: 'release', wipe: request.body.wipe });
    },
  );

  app.post(
    '/v1/metal/nodes/:nodeId/abort',
    { schema: { tags, params: metalNodeParamsSchema, body: metalAbortSchema, response: { 200: metalNodeSchema } } },
    async (request) => {
      const principal = authorize(request, 'compute:nodes:provision', request.body.tenantId);
      return verb(principal, request.body.tenantId, request.params.nodeId, request.body.version, { verb: 'abort', reason: request.body.reason });
    },
  );

  app.post(
    '/v1/metal/nodes/:nodeId/power',
    { schema: { tags, params: metalNodeParamsSchema, body: metalPowerSchema, response: { 200: metalNodeSchema.extend({ powerWorkflowId: z.string() }) } } },
    async (request) => {
      const b = request.body;
      authorize(request, 'compute:nodes:power', b.tenantId);
      const { node, workflowId } = await recordPowerRequest(ctx, { tenantId: b.tenantId, nodeId: request.params.nodeId, version: b.version, action: b.action });
      const run = await startProvision(ctx, {
        tenantId: node.tenantId,
        nodeId: node.id,
        profileId: `metal-power-${b.action}`,
        version: 1,
        provisionState: POWER_RUN_STATE,
        workflowId,
      });
      return { ...metalView(node), powerWorkflowId: run.workflowId };
    },
  );

  app.post(
    '/v1/metal/nodes/:nodeId/confirm-mac',
    { schema: { tags, params: metalNodeParamsSchema, body: metalConfirmMacSchema, response: { 200: metalNodeSchema } } },
    async (request) => {
      authorize(request, 'compute:nodes:provision', request.body.tenantId);
      const node = await confirmMacAndWake(ctx.db, ctx.temporal, {
        tenantId: request.body.tenantId,
        nodeId: request.params.nodeId,
        mac: request.body.mac,
        requestId: request.id,
      });
      return metalView(node);
    },
  );

  // A bulk answers at once with its run (202); the metal-bulk workflow applies it (services/metal/bulk.ts).
  const bulkDeps = {
    db: ctx.db,
    temporal: ctx.temporal,
    controlQueue: ctx.config.controlQueue,
    // One quorum batch for the run: its nodes, the verb's whole chain, the run's reason (nothing when the tenant has no quorum).
    requestQuorumBatch: async (run: { id: string; tenantId: string; verb: string; reason: string }, nodeIds: string[]) => {
      const chain = bulkVerbChain(provisionVerbNamed(run.verb as BulkVerb));
      await requestBatch(ctx.db, {
        tenantId: run.tenantId,
        kind: 'bulk',
        subject: run.id,
        reason: `metal bulk ${run.verb} of ${nodeIds.length} nodes: ${run.reason}`,
        commands: chain.commands,
        states: chain.states,
        nodeIds,
      });
    },
  };
  app.post('/v1/metal/bulk', { schema: { tags, body: metalBulkSchema, response: { 202: metalBulkRunSchema } } }, async (request, reply) => {
    const principal = authorize(request, 'compute:nodes:provision', request.body.tenantId);
    const { run } = await startBulk(bulkDeps, principal.credentialId, request.body);
    return reply.status(202).send(run);
  });

  app.get(
    '/v1/metal/bulk/:bulkId',
    { schema: { tags, params: metalBulkParamsSchema, querystring: metalBulkQuerySchema, response: { 200: metalBulkPageSchema } } },
    async (request) => {
      const q = request.query;
      authorize(request, 'compute:nodes:read', q.tenantId);
      return readBulkPage(ctx.db, {
        tenantId: q.tenantId,
        bulkId: request.params.bulkId,
        limit: q.limit,
        ...(q.outcome ? { outcome: q.outcome } : {}),
        ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
      });
    },
  );

  app.post(
    '/v1/metal/bulk/:bulkId/cancel',
    { schema: { tags, params: metalBulkParamsSchema, body: metalBulkCancelSchema, response: { 200: metalBulkRunSchema } } },
    async (request) => {
      const principal = authorize(request, 'compute:nodes:provision', request.body.tenantId);
      return cancelBulk(bulkDeps, request.body.tenantId, request.params.bulkId, principal.credentialId);
    },
  );
};
