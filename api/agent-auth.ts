// Agent routes authenticate by certificate plus a signature over the exact request bytes
// (services/pki/agent-request.ts). This keeps the raw body of their JSON for that signature.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../services/db';
import { IronflowError } from '../core/errors';
import { readAgentHeaders, verifyAgentRequest } from '../services/pki/agent-request';
import { takeAgentRequestNonce } from '../services/pki/agent-request-nonces';
import { authenticateAgentCertificate, type AuthenticatedAgent } from '../services/pki/authenticate-agent';
import type { NodeCa } from '../services/pki/node-ca';
import { recordRefusal } from '../services/joins/refusal';
import { refuseDeepJson, refuseUnstorableText } from './body-limits';

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: string;
  }
}

/** In the calling plugin's scope only: JSON bodies keep their raw text (bounded like every body: api/body-limits.ts). */
export function keepRawJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    request.rawBody = text;
    if (text === '') return done(null, undefined);
    try {
      refuseDeepJson(text);
    } catch (error) {
      return done(error as IronflowError, undefined);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(new IronflowError('INVALID_INPUT', 'body: not JSON', { path: 'body' }), undefined);
    }
    try {
      refuseUnstorableText(parsed);
    } catch (error) {
      return done(error as IronflowError, undefined);
    }
    done(null, parsed);
  });
}

export async function authenticateAgentRequest(db: Db, ca: NodeCa, request: FastifyRequest, purpose: string): Promise<AuthenticatedAgent> {
  const signed = readAgentHeaders(request.headers);
  const agent = await authenticateAgentCertificate(db, ca, signed.certificatePem, { purpose });
  try {
    verifyAgentRequest(agent.spkiDer, signed, { method: request.method, pathAndQuery: request.url, body: request.rawBody ?? '' });
    // Only a request that verifies takes an id: nobody else can spend the agent's ids.
    await takeAgentRequestNonce(db, { nodeId: agent.nodeId, nonce: signed.nonce, timestampMs: signed.timestampMs });
  } catch (error) {
    return recordRefusal(db, 'security.agent.refused', error, { tenantId: agent.tenantId, subjectId: agent.nodeId, data: { purpose, serial: agent.serial } });
  }
  return agent;
}
