// The operator console: server-rendered pages under /console, signed in with an API
// credential kept in a server-side session, acting through the API's own routes.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../api/context';
import { discoveryRoutes } from './discovery-routes';
import { acceptFormBodies } from './form-body';
import { nodesRoutes } from './nodes-routes';
import { registerConsoleSecurity } from './security';
import { ConsoleSessions } from './session';
import { signInRoutes } from './sign-in-routes';
import { temporalLinks } from '../core/temporal-links';
import { codecRoutes } from '../api/routes/codec';

const assets = [
  { name: 'console.js', type: 'text/javascript; charset=utf-8' },
  { name: 'console.css', type: 'text/css; charset=utf-8' },
];

export async function consoleRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const sessions = new ConsoleSessions();
  registerConsoleSecurity(app);
  acceptFormBodies(app);

  for (const asset of assets) {
    const body = readFileSync(new URL(`./assets/${asset.name}`, import.meta.url));
    app.get(`/console/assets/${asset.name}`, async (_request, reply) => reply.type(asset.type).header('cache-control', 'no-cache').send(body));
  }
  app.get('/console', async (_request, reply) => reply.redirect('/console/nodes', 303));
  signInRoutes(app, sessions, ctx.db);
  discoveryRoutes(app, sessions);
  nodesRoutes(app, sessions, temporalLinks(ctx.config));
  // The Temporal Web UI's codec endpoint: it answers the operators signed in here (their cookie).
  await app.register(codecRoutes, { ...ctx, sessions });
}
