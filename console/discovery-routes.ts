// /console/discovery and its binding form: the site's discovered list through
// GET /v1/sites/:siteId/discovered, a binding through POST /v1/metal/nodes/:nodeId/confirm-mac,
// each under the signed-in credential.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DiscoveredMachine } from '../core/schemas/discovery';
import type { MetalNodeView } from '../core/schemas/metal';
import type { SiteView } from '../core/schemas/sites';
import { apiCaller, apiUrl, problemText } from './api-calls';
import { checkCsrf, signedIn, signedOutBy, takeFlash } from './guard';
import { discoveryPage } from './pages/discovery';
import type { ConsoleSessions } from './session';

const discoveryQuerySchema = z.object({ siteId: z.string().min(1).max(128).optional() });
const confirmFormSchema = z.object({ siteId: z.string().min(1).max(128), nodeId: z.string().trim().min(1).max(128), mac: z.string().trim().min(1).max(64) });

const discoveryUrl = (siteId: string): string => `/console/discovery?${new URLSearchParams({ siteId }).toString()}`;

export function discoveryRoutes(app: FastifyInstance, sessions: ConsoleSessions): void {
  app.get('/console/discovery', async (request, reply) => {
    const session = signedIn(sessions, request, reply);
    if (!session) return reply;
    const tenantId = session.principal.tenantId;
    const api = apiCaller(app, session.credential, request.id);
    const sites = await api.get<{ sites: SiteView[] }>(apiUrl('/v1/sites', { tenantId }));
    if (!sites.ok && signedOutBy(sites.problem, sessions, session, request, reply)) return reply;
    const query = discoveryQuerySchema.safeParse(request.query);
    const siteList = sites.ok ? sites.data.sites : undefined;
    // No site picked: the tenant's first, so a one-site tenant sees its list at once.
    const siteId = query.success ? (query.data.siteId ?? siteList?.[0]?.id) : undefined;
    const discovered = siteId
      ? await api.get<{ items: DiscoveredMachine[] }>(apiUrl(`/v1/sites/${encodeURIComponent(siteId)}/discovered`, { tenantId }))
      : undefined;
    const refusal = !sites.ok ? problemText(sites.problem) : !query.success ? 'INVALID_INPUT: siteId is not a site id' : undefined;
    const flash = takeFlash(session) ?? (refusal ? { kind: 'error' as const, text: refusal } : undefined);
    return reply.type('text/html; charset=utf-8').send(
      discoveryPage({
        session,
        ...(flash ? { flash } : {}),
        sites: siteList,
        ...(siteId ? { siteId } : {}),
        ...(discovered ? { discovered: discovered.ok ? { ok: true, items: discovered.data.items } : discovered } : {}),
      }),
    );
  });

  app.post('/console/discovery/confirm', async (request, reply) => {
    const session = signedIn(sessions, request, reply);
    if (!session) return reply;
    checkCsrf(session, request.body);
    const form = confirmFormSchema.safeParse(request.body);
    if (!form.success) {
      session.flash = { kind: 'error', text: 'INVALID_INPUT: a binding needs a node id and a MAC' };
      return reply.redirect('/console/discovery', 303);
    }
    const { siteId, nodeId, mac } = form.data;
    const api = apiCaller(app, session.credential, request.id);
    const answer = await api.post<MetalNodeView>(`/v1/metal/nodes/${encodeURIComponent(nodeId)}/confirm-mac`, { tenantId: session.principal.tenantId, mac });
    if (!answer.ok && signedOutBy(answer.problem, sessions, session, request, reply)) return reply;
    session.flash = answer.ok
      ? { kind: 'ok', text: `MAC ${mac} bound to node ${nodeId} (${answer.data.provisionState ?? 'no state'}).` }
      : { kind: 'error', text: `Refused: ${problemText(answer.problem)}` };
    return reply.redirect(discoveryUrl(siteId), 303);
  });
}
