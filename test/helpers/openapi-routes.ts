// The API's routes as its own OpenAPI document lists them (served at /docs/json), plus any
// route the server serves but hides from the document, and for each one who may call it and
// one valid request built from a tenant's objects. The suites that must cover every route
// (tenant isolation, bad input) walk them and fail on a route this table does not name, so a
// route cannot be added without being classified here.
import { generateKeyPairSync } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Permission } from '../../core/permissions';

/** The parts of a JSON schema the suites read. */
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  nullable?: boolean;
  additionalProperties?: boolean | JsonSchema;
}

export interface OpenApiRoute {
  /** `POST /v1/sites/{siteId}/tokens`: the table's key. */
  key: string;
  method: string;
  /** OpenAPI form, `{name}` for a path parameter. */
  path: string;
  pathParams: string[];
  /** The JSON body's schema, when the route takes one. */
  body?: JsonSchema;
}

interface OpenApiOperation {
  parameters?: Array<{ in: string; name: string }>;
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

/** Every route × method of the document the server serves. */
export async function openApiRoutes(baseUrl: string): Promise<OpenApiRoute[]> {
  const response = await fetch(new URL('/docs/json', baseUrl));
  if (!response.ok) throw new Error(`GET /docs/json answered ${response.status}`);
  const document = (await response.json()) as { paths: Record<string, Record<string, OpenApiOperation>> };
  const routes: OpenApiRoute[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const upper = method.toUpperCase();
      routes.push({
        key: `${upper} ${path}`,
        method: upper,
        path,
        pathParams: (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        ...(operation.requestBody?.content?.['application/json']?.schema ? { body: operation.requestBody.content['application/json'].schema } : {}),
      });
    }
  }
  return routes;
}

/**
 * `METHOD /path/{param}` of every route the server serves, read from its route tree: HEAD
 * (Fastify adds one to each GET) and the API docs' own pages left out.
 */
export function servedRouteKeys(app: FastifyInstance): string[] {
  const keys: string[] = [];
  const prefixes: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    // `│   ├── /tokens (POST)`: four characters of tree per level, a segment appended to its parent's path.
    const match = /^([│├└─\s]*)(\S.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] as string).length / 4;
    const path = (prefixes[depth - 1] ?? '') + (match[2] as string);
    prefixes.length = depth;
    prefixes[depth] = path;
    for (const method of match[3]?.split(', ') ?? []) {
      if (method !== 'HEAD' && path !== '/docs' && !path.startsWith('/docs/')) keys.push(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
    }
  }
  return keys;
}

/** The document's routes, then each route the server serves that the document hides (no body schema to read for those). */
export async function routesToCover(baseUrl: string, app: FastifyInstance): Promise<OpenApiRoute[]> {
  const documented = await openApiRoutes(baseUrl);
  const listed = new Set(documented.map((r) => r.key));
  const hidden = servedRouteKeys(app)
    .filter((key) => !listed.has(key))
    .map((key): OpenApiRoute => {
      const [method, path] = key.split(' ') as [string, string];
      return { key, method, path, pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string) };
    });
  return [...documented, ...hidden];
}

/** One object of every kind a tenant owns, by id. */
export interface TenantObjects {
  tenantId: string;
  siteId: string;
  siteTokenId: string;
  poolId: string;
  nodeId: string;
  /** The node's state workflow (a provision workflow tagged with the tenant). */
  workflowId: string;
  imageId: string;
  profileId: string;
  credentialId: string;
  joinRequestId: string;
  checkId: string;
  /** A site whose agent reported PXE clients (the discovered list is not empty). */
  discoveredSiteId: string;
  /** A metal bulk run of the tenant's pool (ended). */
  bulkId: string;
  /** A destructive-batch quorum batch of the tenant (it has a quorum policy). */
  batchId: string;
}

export interface RouteRequest {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
}

/**
 * What another tenant's full credential meets when it names its own tenant:
 * not-found — the request names the owner's objects, so NOT_FOUND;
 * own-list — a list of the caller's own tenant, which must hold none of the owner's objects;
 * own-create — it creates an object of the caller's own and names none of the owner's
 * (nothing to isolate; its other tenant's tenantId is still refused).
 */
export type CrossTenant = 'not-found' | 'own-list' | 'own-create';

export type RouteSpec =
  /** Called without an API credential; the reason says what authenticates it instead. */
  | { access: 'public'; reason: string; request?: (o: TenantObjects) => RouteRequest }
  /** Acts for the tenant named in its query (reads, deletes) or body (other mutations). */
  | { access: 'tenant'; permission: Permission; crossTenant: CrossTenant; request: (o: TenantObjects, tenantId: string) => RouteRequest }
  /** Platform operators only: the permission is checked against the root tenant. */
  | { access: 'root'; permission: Permission; request: (o: TenantObjects) => RouteRequest };

const node = (o: TenantObjects) => ({ nodeId: o.nodeId });
const q = (tenantId: string) => ({ tenantId });
const b = (tenantId: string, rest: Record<string, unknown> = {}) => ({ tenantId, ...rest });

/** A metal verb on the tenant's node: NOT_FOUND to anyone else. */
const metalVerb = (extra: Record<string, unknown> = {}): RouteSpec => ({
  access: 'tenant',
  permission: 'compute:nodes:provision',
  crossTenant: 'not-found',
  request: (o, t) => ({ params: node(o), body: b(t, extra) }),
});

const AGENT = 'an agent route: authenticated by its node certificate and a request signature (the agent-authentication suite), never by an API credential';
/** A quorum approver a probe names (a real Ed25519 key, so only the probe's own fault is refused). */
export const probeApprover = {
  id: 'probe',
  name: 'Probe approver',
  publicKeyPem: generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString(),
};
const JOIN = 'join: authenticated by a join token or the current certificate in the body (test/integration/join.test.ts)';
const CONSOLE = "the operator console: its own sign-in session, acting through the API's routes with the signed-in credential";
const agentBody = (o: TenantObjects, rest: Record<string, unknown> = {}) => ({ body: { nodeId: o.nodeId, workflowId: o.workflowId, ...rest } });
const at = '2026-01-01T00:00:00Z';

export const routeSpecs: Record<string, RouteSpec> = {
  'GET /healthz': { access: 'public', reason: 'liveness: no data' },
  'GET /metrics': { access: 'root', permission: 'compute:events:read', request: () => ({}) },

  'GET /v1/events': { access: 'tenant', permission: 'compute:events:read', crossTenant: 'own-list', request: (_o, t) => ({ query: q(t) }) },
  'POST /v1/tenants': { access: 'root', permission: 'compute:tenants:manage', request: () => ({ body: { id: 'isolation-probe', name: 'Isolation probe' } }) },

  'POST /v1/credentials': {
    access: 'tenant',
    permission: 'compute:credentials:manage',
    crossTenant: 'own-create',
    request: (_o, t) => ({ body: b(t, { name: 'probe', permissions: ['compute:events:read'] }) }),
  },
  'GET /v1/credentials': { access: 'tenant', permission: 'compute:credentials:read', crossTenant: 'own-list', request: (_o, t) => ({ query: q(t) }) },
  'POST /v1/credentials/{credentialId}/revoke': {
    access: 'tenant',
    permission: 'compute:credentials:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { credentialId: o.credentialId }, body: b(t) }),
  },
  'POST /v1/credentials/{credentialId}/rotate': {
    access: 'tenant',
    permission: 'compute:credentials:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { credentialId: o.credentialId }, body: b(t) }),
  },

  'POST /v1/system/checks': { access: 'tenant', permission: 'compute:events:read', crossTenant: 'own-create', request: (_o, t) => ({ body: b(t) }) },
  'GET /v1/system/checks/{checkId}': {
    access: 'tenant',
    permission: 'compute:events:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { checkId: o.checkId }, query: q(t) }),
  },

  'POST /v1/images': {
    access: 'tenant',
    permission: 'compute:images:publish',
    crossTenant: 'own-create',
    request: (_o, t) => ({
      body: b(t, {
        ref: 'probe-os@1',
        kind: 'os',
        format: 'raw',
        compression: 'none',
        sha256: 'ab'.repeat(32),
        sizeBytes: 1024,
        source: 'https://images.example/probe.raw',
      }),
    }),
  },
  'GET /v1/images': { access: 'tenant', permission: 'compute:images:read', crossTenant: 'own-list', request: (_o, t) => ({ query: q(t) }) },
  'GET /v1/images/{imageId}': {
    access: 'tenant',
    permission: 'compute:images:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { imageId: o.imageId }, query: q(t) }),
  },
  'POST /v1/images/{imageId}/promote': {
    access: 'tenant',
    permission: 'compute:images:publish',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { imageId: o.imageId }, body: b(t) }),
  },

  'POST /v1/sites': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'own-create',
    request: (_o, t) => ({ body: b(t, { kind: 'custom', region: 'probe-1', idempotencyKey: 'isolation-probe-site' }) }),
  },
  'GET /v1/sites': { access: 'tenant', permission: 'compute:sites:read', crossTenant: 'own-list', request: (_o, t) => ({ query: q(t) }) },
  'GET /v1/sites/{siteId}': {
    access: 'tenant',
    permission: 'compute:sites:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { siteId: o.siteId }, query: q(t) }),
  },
  'PATCH /v1/sites/{siteId}': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { siteId: o.siteId }, body: b(t, { region: 'probe-2' }) }),
  },
  'DELETE /v1/sites/{siteId}': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { siteId: o.siteId }, query: q(t) }),
  },
  'POST /v1/sites/{siteId}/tokens': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { siteId: o.siteId }, body: b(t, { ttlSeconds: 600 }) }),
  },
  'DELETE /v1/sites/{siteId}/tokens/{tokenId}': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { siteId: o.siteId, tokenId: o.siteTokenId }, query: q(t) }),
  },
  'GET /v1/sites/{siteId}/discovered': {
    access: 'tenant',
    permission: 'compute:sites:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { siteId: o.discoveredSiteId }, query: q(t) }),
  },

  // A pool on the owner's site, a node in the owner's pool: the referenced object is NOT_FOUND.
  'POST /v1/pools': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ body: b(t, { siteId: o.siteId, class: 'probe' }) }),
  },
  'GET /v1/pools': {
    access: 'tenant',
    permission: 'compute:sites:read',
    crossTenant: 'own-list',
    request: (o, t) => ({ query: { ...q(t), siteId: o.siteId } }),
  },
  'GET /v1/pools/{poolId}': {
    access: 'tenant',
    permission: 'compute:sites:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { poolId: o.poolId }, query: q(t) }),
  },
  'PATCH /v1/pools/{poolId}': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { poolId: o.poolId }, body: b(t, { class: 'probe-renamed' }) }),
  },
  'DELETE /v1/pools/{poolId}': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { poolId: o.poolId }, query: q(t) }),
  },

  'POST /v1/join': { access: 'public', reason: JOIN, request: () => ({ body: { token: 'ifj_probe.secret', csr: 'not a csr' } }) },
  'POST /v1/join/renew': { access: 'public', reason: JOIN, request: () => ({ body: { certificate: 'not a certificate', csr: 'not a csr' } }) },
  'GET /v1/join/ca': { access: 'public', reason: 'the node CA certificate: public by nature (agents pin it)' },

  'GET /v1/join-requests': { access: 'tenant', permission: 'compute:sites:read', crossTenant: 'own-list', request: (_o, t) => ({ query: q(t) }) },
  'POST /v1/join-requests/{id}/approve': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { id: o.joinRequestId }, body: b(t) }),
  },
  'POST /v1/join-requests/{id}/reject': {
    access: 'tenant',
    permission: 'compute:sites:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { id: o.joinRequestId }, body: b(t) }),
  },

  'POST /v1/agents/session': {
    access: 'public',
    reason: AGENT,
    request: () => ({ body: { agentVersion: 'probe', hostname: 'probe', images: [], siteStatus: { state: 'READY', message: 'ok' }, discovered: [] } }),
  },
  'POST /v1/agents/bmc-access': { access: 'public', reason: AGENT, request: (o) => agentBody(o) },
  'POST /v1/agents/proxy-targets': { access: 'public', reason: AGENT, request: (o) => agentBody(o) },
  'POST /v1/agents/bmc-operations/get': { access: 'public', reason: AGENT, request: (o) => agentBody(o, { operationId: 'power-on:1' }) },
  'POST /v1/agents/bmc-operations/put': {
    access: 'public',
    reason: AGENT,
    request: (o) =>
      agentBody(o, { expected: 'none', operation: { operationId: 'power-on:1', kind: 'power', bmc: 'https://10.0.0.1', state: 'started', startedAt: at } }),
  },
  'POST /v1/agents/boot-secret': { access: 'public', reason: AGENT, request: (o) => agentBody(o, { ref: 'sec_probe' }) },
  'POST /v1/agents/boot-secret/release': { access: 'public', reason: AGENT, request: (o) => agentBody(o) },
  'POST /v1/agents/user-data': { access: 'public', reason: AGENT, request: (o) => agentBody(o, { ref: 'sec_probe' }) },
  'POST /v1/agents/quorum-refusals': {
    access: 'public',
    reason: AGENT,
    request: (o) => agentBody(o, { kind: 'disk.wipe', reason: 'quorum-missing', message: 'probe' }),
  },

  'PUT /v1/quorum/policy': {
    access: 'tenant',
    permission: 'compute:credentials:manage',
    crossTenant: 'own-create',
    request: (_o, t) => ({ body: b(t, { required: 1, approvers: [probeApprover] }) }),
  },
  'GET /v1/quorum/policy': { access: 'tenant', permission: 'compute:nodes:read', crossTenant: 'not-found', request: (_o, t) => ({ query: q(t) }) },
  'DELETE /v1/quorum/policy': { access: 'tenant', permission: 'compute:credentials:manage', crossTenant: 'not-found', request: (_o, t) => ({ query: q(t) }) },
  'GET /v1/quorum/batches': { access: 'tenant', permission: 'compute:nodes:read', crossTenant: 'own-list', request: (_o, t) => ({ query: q(t) }) },
  'GET /v1/quorum/batches/{batchId}': {
    access: 'tenant',
    permission: 'compute:nodes:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { batchId: o.batchId }, query: q(t) }),
  },
  'POST /v1/quorum/batches/{batchId}/approvals': {
    access: 'tenant',
    permission: 'compute:nodes:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { batchId: o.batchId }, body: b(t, { approverId: 'probe', signature: 'AAAA' }) }),
  },
  'POST /v1/quorum/batches/{batchId}/refusals': {
    access: 'tenant',
    permission: 'compute:nodes:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { batchId: o.batchId }, body: b(t, { approverId: 'probe', signature: 'AAAA', reason: 'probe' }) }),
  },

  'POST /v1/profiles': {
    access: 'tenant',
    permission: 'compute:profiles:manage',
    crossTenant: 'own-create',
    request: (_o, t) => ({
      body: b(t, { document: { id: 'isolation-probe', version: 1, target: 'metal', steps: [{ use: 'power.setPower', on: 'site', with: { action: 'on' } }] } }),
    }),
  },
  'GET /v1/profiles': {
    access: 'tenant',
    permission: 'compute:profiles:read',
    crossTenant: 'own-list',
    request: (o, t) => ({ query: { ...q(t), id: o.profileId } }),
  },
  'GET /v1/profiles/{id}': {
    access: 'tenant',
    permission: 'compute:profiles:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { id: o.profileId }, query: q(t) }),
  },
  'PATCH /v1/profiles/{id}': {
    access: 'tenant',
    permission: 'compute:profiles:manage',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { id: o.profileId }, body: b(t, { visibility: 'private' }) }),
  },
  'GET /v1/profiles/{id}/versions/{version}': {
    access: 'tenant',
    permission: 'compute:profiles:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { id: o.profileId, version: '1' }, query: q(t) }),
  },
  'POST /v1/profiles/{id}/validate': {
    access: 'tenant',
    permission: 'compute:profiles:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { id: o.profileId }, body: b(t) }),
  },
  'GET /v1/profiles/{id}/render': {
    access: 'tenant',
    permission: 'compute:profiles:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { id: o.profileId }, query: q(t) }),
  },
  'POST /v1/profiles/{id}/runs': {
    access: 'tenant',
    permission: 'compute:nodes:provision',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { id: o.profileId }, body: b(t, { nodeId: o.nodeId }) }),
  },
  'GET /v1/workflows/{workflowId}': {
    access: 'tenant',
    permission: 'compute:nodes:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { workflowId: o.workflowId }, query: q(t) }),
  },

  'POST /v1/metal/nodes': {
    access: 'tenant',
    permission: 'compute:nodes:provision',
    crossTenant: 'not-found',
    request: (o, t) => ({
      body: b(t, { poolId: o.poolId, bmc: { driver: 'redfish', address: 'https://10.0.77.1', username: 'admin', password: 'probe-bmc-password' } }),
    }),
  },
  'GET /v1/metal/nodes': {
    access: 'tenant',
    permission: 'compute:nodes:read',
    crossTenant: 'own-list',
    request: (o, t) => ({ query: { ...q(t), poolId: o.poolId } }),
  },
  'GET /v1/metal/nodes/{nodeId}': {
    access: 'tenant',
    permission: 'compute:nodes:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: node(o), query: q(t) }),
  },
  'GET /v1/metal/nodes/{nodeId}/status': {
    access: 'tenant',
    permission: 'compute:nodes:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: node(o), query: q(t) }),
  },
  'POST /v1/metal/nodes/{nodeId}/manage': metalVerb(),
  'POST /v1/metal/nodes/{nodeId}/inspect': metalVerb(),
  'POST /v1/metal/nodes/{nodeId}/provide': metalVerb(),
  'POST /v1/metal/nodes/{nodeId}/rescue': metalVerb(),
  'POST /v1/metal/nodes/{nodeId}/unrescue': metalVerb(),
  'POST /v1/metal/nodes/{nodeId}/recover': metalVerb(),
  'POST /v1/metal/nodes/{nodeId}/retire': metalVerb(),
  'POST /v1/metal/nodes/{nodeId}/deploy': metalVerb({ profileId: 'metal-deploy', profileVersion: 1 }),
  'POST /v1/metal/nodes/{nodeId}/undeploy': metalVerb({ wipe: 'quick' }),
  'POST /v1/metal/nodes/{nodeId}/abort': metalVerb({ reason: 'isolation probe' }),
  'POST /v1/metal/nodes/{nodeId}/confirm-mac': metalVerb({ mac: 'b8:ce:f6:77:00:01' }),
  'POST /v1/metal/nodes/{nodeId}/maintenance': metalVerb({ on: true, reason: 'isolation probe' }),
  'POST /v1/metal/adopt-tokens': {
    access: 'tenant',
    permission: 'compute:nodes:provision',
    crossTenant: 'not-found',
    request: (o, t) => ({ body: b(t, { poolId: o.poolId }) }),
  },
  'POST /v1/metal/nodes/{nodeId}/power': {
    access: 'tenant',
    permission: 'compute:nodes:power',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: node(o), body: b(t, { action: 'off' }) }),
  },
  'POST /v1/metal/bulk': {
    access: 'tenant',
    permission: 'compute:nodes:provision',
    crossTenant: 'not-found',
    request: (o, t) => ({ body: b(t, { poolId: o.poolId, verb: 'retire', nodeIds: [o.nodeId], reason: 'isolation probe' }) }),
  },
  'GET /v1/metal/bulk/{bulkId}': {
    access: 'tenant',
    permission: 'compute:nodes:read',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { bulkId: o.bulkId }, query: q(t) }),
  },
  'POST /v1/metal/bulk/{bulkId}/cancel': {
    access: 'tenant',
    permission: 'compute:nodes:provision',
    crossTenant: 'not-found',
    request: (o, t) => ({ params: { bulkId: o.bulkId }, body: b(t) }),
  },

  'GET /console/assets/console.js': { access: 'public', reason: 'a static script of the console' },
  'GET /console/assets/console.css': { access: 'public', reason: 'a static style sheet of the console' },
  'GET /console': { access: 'public', reason: CONSOLE },
  'GET /console/sign-in': { access: 'public', reason: CONSOLE },
  'POST /console/sign-in': { access: 'public', reason: CONSOLE, request: () => ({ body: { csrf: 'probe', credential: 'ifk_probe.secret' } }) },
  'POST /console/sign-out': { access: 'public', reason: CONSOLE, request: () => ({ body: { csrf: 'probe' } }) },
  'GET /console/discovery': { access: 'public', reason: CONSOLE },
  'POST /console/discovery/confirm': {
    access: 'public',
    reason: CONSOLE,
    request: (o) => ({ body: { csrf: 'probe', siteId: o.siteId, nodeId: o.nodeId, mac: 'b8:ce:f6:77:00:01' } }),
  },
  'GET /console/nodes': { access: 'public', reason: CONSOLE },
  // The Temporal Web UI's codec (hidden from the document): sealed payloads say no tenant, so only the platform's operators.
  'POST /console/codec/decode': { access: 'root', permission: 'compute:nodes:read', request: () => ({ body: { payloads: [] } }) },
  'POST /console/codec/encode': { access: 'root', permission: 'compute:nodes:read', request: () => ({ body: { payloads: [] } }) },
  'OPTIONS /console/codec/decode': { access: 'public', reason: 'a CORS preflight: it carries no credential by design (the POST it precedes is checked)' },
  'OPTIONS /console/codec/encode': { access: 'public', reason: 'a CORS preflight: it carries no credential by design (the POST it precedes is checked)' },
};

/** The routes served that the table does not classify, and table rows for routes that no longer exist. */
export function unclassified(routes: readonly OpenApiRoute[]): { missing: string[]; stale: string[] } {
  const listed = new Set(routes.map((r) => r.key));
  return { missing: [...listed].filter((key) => !(key in routeSpecs)), stale: Object.keys(routeSpecs).filter((key) => !listed.has(key)) };
}

/** The request's path and query string, each value encoded. */
export function urlOf(route: Pick<OpenApiRoute, 'path'>, request: RouteRequest, rawParams: Record<string, string> = {}): string {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name in rawParams) return rawParams[name] as string;
    const value = request.params?.[name];
    if (value === undefined) throw new Error(`${route.path}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
  const query = request.query ? `?${new URLSearchParams(request.query).toString()}` : '';
  return path + query;
}
