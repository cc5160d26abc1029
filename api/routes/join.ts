// Join (agents, no API credential): POST /v1/join (token + CSR), POST /v1/join/renew
// (current certificate + CSR by the same key), GET /v1/join/ca (the node CA, PEM).
// The node CA is loaded, or created on first start, when this plugin registers.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { joinNode } from '../../core/joins/join-node';
import { renewCertificate } from '../../core/joins/renew-certificate';
import { loadOrCreateNodeCa } from '../../core/pki/node-ca';
import { caSchema, issuedCertificateSchema, joinAnswerSchema, joinSchema, renewSchema } from '../../core/schemas/join';
import type { ApiContext } from '../context';

export const joinRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  const ca = await loadOrCreateNodeCa(ctx.db, ctx.secrets, ctx.config.dataDir);
  const temporal = { address: ctx.config.temporal.address, namespace: ctx.config.temporal.namespace };

  app.post('/v1/join', { schema: { tags: ['join'], security: [], body: joinSchema, response: { 201: joinAnswerSchema } } }, async (request, reply) => {
    return reply.status(201).send(await joinNode({ db: ctx.db, ca, temporal }, request.body));
  });

  app.post('/v1/join/renew', { schema: { tags: ['join'], security: [], body: renewSchema, response: { 201: issuedCertificateSchema } } }, async (request, reply) => {
    return reply.status(201).send(await renewCertificate(ctx.db, ca, request.body));
  });

  app.get('/v1/join/ca', { schema: { tags: ['join'], security: [], response: { 200: caSchema } } }, async () => ({ certificate: ca.certificatePem }));
};
