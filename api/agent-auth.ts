// Agent routes authenticate by certificate plus a signature over the exact request bytes
// (services/pki/agent-request.ts): the agent API's preHandler (api/routes/agents.ts) runs
// this for every route it holds, with the raw body of their JSON kept for that signature.
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
    /** The agent a request to /v1/agents/… authenticated as; set by that plugin's preHandler, on its routes only. */
    agent: AuthenticatedAgent;
  }
  interface FastifyContextConfig {
    /** What an agent route is for: named in the refusal event of an agent that fails to authenticate on it. */
    agentPurpose?: string;
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
    verifyAgentRequest(agent.publicKey, signed, { method: request.method, pathAndQuery: request.url, body: request.rawBody ?? '' });
    // Only a request that verifies takes an id: nobody else can spend the agent's ids.
    await takeAgentRequestNonce(db, { nodeId: agent.nodeId, nonce: signed.nonce, timestampMs: signed.timestampMs });
  } catch (error) {
    return recordRefusal(db, 'security.agent.refused', error, { tenantId: agent.tenantId, subjectId: agent.nodeId, data: { purpose, serial: agent.serial } });
  }
  return agent;
}
