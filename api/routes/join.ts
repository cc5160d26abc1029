// Join (agents, no API credential): POST /v1/join (token + CSR), POST /v1/join/renew
// (current certificate + CSR by the same key), GET /v1/join/ca (the node CA, PEM).
// The node CA is loaded, or created on first start, when this plugin registers.
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { recordRefusal } from '../../services/joins/refusal';
import { workflowRunsFor } from '../../services/bmc-access';
import { temporalAgentJoinedNotifier } from '../../services/joins/agent-joined';
import { wakeLifecycle } from '../../services/temporal/starters';
import { joinNode } from '../../services/joins/join-node';
import { renewCertificate } from '../../services/joins/renew-certificate';
import { caSchema, issuedCertificateSchema, joinAnswerSchema, joinSchema, renewSchema } from '../../core/schemas/join';
import type { ApiContext } from '../context';
import { toApiError } from '../error-handler';

export const joinRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  const { nodeCa: ca } = ctx;
  const gateway = { ...ctx.agentGateway, namespace: ctx.config.temporal.namespace };
  const notifyJoined = temporalAgentJoinedNotifier(ctx.temporal, app.log);
  // Malformed bodies are refusals too: validated here (attachValidation) so they are recorded,
  // under the route's path: the caller's query string is its own text and never reaches an event.
  const refuseInvalid = async (request: FastifyRequest, type: string) => {
    if (request.validationError) await recordRefusal(ctx.db, type, toApiError(request.validationError), { data: { purpose: request.routeOptions.url } });
  };

  app.post(
    '/v1/join',
    { attachValidation: true, schema: { tags: ['join'], security: [], body: joinSchema, response: { 201: joinAnswerSchema } } },
    async (request, reply) => {
      await refuseInvalid(request, 'security.join.refused');
      const workflowRuns = (workflowId: string, nodeId: string) => workflowRunsFor(ctx.temporal, workflowId, nodeId);
      return reply.status(201).send(
        await joinNode(
          {
            db: ctx.db,
            ca,
            gateway,
            workflowRuns,
            discoveryApproval: ctx.config.discoveryApproval,
            notifyJoined,
            wakeLifecycle: (node) => wakeLifecycle(ctx.temporal, ctx.config.controlQueue, node),
          },
          request.body,
        ),
      );
    },
  );

  app.post(
    '/v1/join/renew',
    { attachValidation: true, schema: { tags: ['join'], security: [], body: renewSchema, response: { 201: issuedCertificateSchema } } },
    async (request, reply) => {
      await refuseInvalid(request, 'security.agent.refused');
      return reply.status(201).send(await renewCertificate(ctx.db, ca, request.body));
    },
  );

  app.get('/v1/join/ca', { schema: { tags: ['join'], security: [], response: { 200: caSchema } } }, async () => ({ certificate: ca.certificatePem }));
};
