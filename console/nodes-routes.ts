// /console/nodes: the tenant's machines through GET /v1/metal/nodes under the signed-in
// credential, every page of the list up to MAX_LISTED_NODES.
import type { FastifyInstance } from 'fastify';
import type { MetalNodeView } from '../core/schemas/metal';
import { apiCaller, apiUrl, type ApiAnswer } from './api-calls';
import { signedIn, signedOutBy, takeFlash } from './guard';
import { nodesPage } from './pages/nodes';
import type { ConsoleSessions } from './session';
import type { TemporalLinks } from '../core/temporal-links';

/** A page the browser still renders quickly; beyond it the page says the list was cut. */
const MAX_LISTED_NODES = 5000;
const PAGE_SIZE = 1000;

type NodeList = ApiAnswer<{ items: MetalNodeView[]; truncated: boolean }>;

export function nodesRoutes(app: FastifyInstance, sessions: ConsoleSessions, links: TemporalLinks): void {
  app.get('/console/nodes', async (request, reply) => {
    const session = signedIn(sessions, request, reply);
    if (!session) return reply;
    const api = apiCaller(app, session.credential, request.id);
    const listAll = async (): Promise<NodeList> => {
      const items: MetalNodeView[] = [];
      let cursor: string | undefined;
      for (;;) {
        const answer = await api.get<{ nodes: MetalNodeView[]; nextCursor: string | null }>(
          apiUrl('/v1/metal/nodes', { tenantId: session.principal.tenantId, limit: PAGE_SIZE, cursor }),
        );
        if (!answer.ok) return answer;
        items.push(...answer.data.nodes);
        cursor = answer.data.nextCursor ?? undefined;
        if (!cursor) return { ok: true, data: { items, truncated: false } };
        if (items.length >= MAX_LISTED_NODES) return { ok: true, data: { items, truncated: true } };
      }
    };
    const nodes = await listAll();
    if (!nodes.ok && signedOutBy(nodes.problem, sessions, session, request, reply)) return reply;
    const flash = takeFlash(session);
    return reply
      .type('text/html; charset=utf-8')
      .send(nodesPage({ session, ...(flash ? { flash } : {}), links, nodes: nodes.ok ? { ok: true, ...nodes.data } : nodes }));
  });
}
