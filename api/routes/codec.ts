// The Temporal Web UI's remote codec (docs/sealed-histories.md): POST <path>/decode and
// <path>/encode in the codec server protocol ({payloads: [{metadata: {k: base64}, data:
// base64}]} in and out, the namespace in X-Namespace), under /console because its browser
// caller presents the console's sign-in session: the Web UI sends the session cookie when
// its codec settings include cross-origin credentials. A bearer in Authorization works too
// (`temporal … --codec-endpoint … --codec-auth 'Bearer ifk_…'`).
//
// Who may decode: a sealed payload does not say whose it is (the codec sees payloads, not
// workflows), so only the platform (root) tenant's operators, with compute:nodes:read. No
// credential is 401; a credential refused, a tenant's operator or a missing permission, and a
// page of another origin, are refusals with a security event.
import type { Payload } from '@temporalio/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { readCookie, SESSION_COOKIE } from '../../console/cookies';
import type { ConsoleSessions } from '../../console/session';
import { authenticate, type Principal } from '../../services/credentials';
import { httpStatusOf, IronflowError, parseWith } from '../../core/errors';
import { recordRefusal } from '../../services/joins/refusal';
import { grants, ROOT_TENANT } from '../../core/permissions';
import { CODEC_PATH, sealingCodecFor } from '../../services/sealing';
import { temporalWebUiBase } from '../../core/temporal-links';
import type { ApiContext } from '../context';
import { toApiError } from '../error-handler';

/** The Web UI asks per event or per page of events: a few payloads each time. */
const MAX_CODEC_PAYLOADS = 512;
const MAX_CODEC_METADATA_ENTRIES = 32;
/** Temporal refuses payloads past 2 MiB by default; base64 adds a third. */
const MAX_CODEC_BODY_BYTES = 4 * 1024 * 1024;
const DECODE_PERMISSION = 'compute:nodes:read';
const REFUSAL_EVENT = 'security.codec.refused';

interface CodecRouteDeps extends ApiContext {
  /** The console's sign-in sessions: a signed-in operator's browser presents its cookie. */
  sessions: ConsoleSessions;
}

// Protobuf JSON's bytes: base64, standard or URL-safe, padded or not.
const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'not base64');
const payloadJsonSchema = z.object({
  metadata: z
    .record(z.string().min(1).max(128), base64)
    .refine((m) => Object.keys(m).length <= MAX_CODEC_METADATA_ENTRIES, `at most ${MAX_CODEC_METADATA_ENTRIES} metadata entries`)
    .optional(),
  data: base64.optional(),
});
// Protobuf JSON omits an empty list: the temporal CLI sends `{}` for a query without arguments.
const payloadsJsonSchema = z.strictObject({
  payloads: z.array(payloadJsonSchema).max(MAX_CODEC_PAYLOADS, `at most ${MAX_CODEC_PAYLOADS} payloads a request`).default([]),
});
type PayloadJson = z.infer<typeof payloadJsonSchema>;

const fromJson = (p: PayloadJson): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toJson = (p: Payload): PayloadJson => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

const identity = { encode: async (p: Payload[]) => p, decode: async (p: Payload[]) => p };

export async function codecRoutes(app: FastifyInstance, deps: CodecRouteDeps): Promise<void> {
  // Sealing never on: nothing is sealed, the codec is the identity.
  const codec = sealingCodecFor(deps.config) ?? identity;
  const webUiOrigin = temporalWebUiBase(deps.config);
  const fix = `sign in to the console (${deps.config.api.publicUrl}/console/sign-in) with a root operator's credential, and in the Web UI's codec server settings include cross-origin credentials`;

  // CORS: the Web UI's origin only, with credentials (its cookie). Answers without an Origin
  // (the temporal CLI, scripts) need no CORS; another origin's page is refused.
  const originAllowed = (request: FastifyRequest) => request.headers.origin === undefined || request.headers.origin === webUiOrigin;
  const originRefused = (request: FastifyRequest) =>
    new IronflowError('PERMISSION_DENIED', `origin ${String(request.headers.origin).slice(0, 200)} is not the Temporal Web UI's (${webUiOrigin})`, {
      reason: 'origin-not-allowed',
    });

  const refuse = (request: FastifyRequest, error: IronflowError, principal?: Principal): Promise<never> =>
    recordRefusal(deps.db, REFUSAL_EVENT, error, {
      tenantId: principal?.tenantId,
      subjectId: principal?.credentialId,
      data: { route: request.routeOptions.url, ...(request.headers.origin ? { origin: request.headers.origin } : {}) },
    });

  /** The caller's principal: its bearer, else its console session's credential (read again: a revoked one is refused). */
  async function callerOf(request: FastifyRequest): Promise<Principal> {
    const session = request.headers.authorization === undefined ? deps.sessions.use(readCookie(request.headers.cookie, SESSION_COOKIE)) : undefined;
    const authorization = request.headers.authorization ?? (session ? `Bearer ${session.credential}` : undefined);
    // Nothing presented guesses nothing: a 401 without an event (every Web UI page an operator views signed out).
    if (authorization === undefined) throw new IronflowError('UNAUTHENTICATED', `no credential: ${fix}`, { reason: 'no-credential' });
    try {
      return await authenticate(deps.db, authorization);
    } catch (error) {
      return refuse(request, toApiError(error));
    }
  }

  /** A root operator with the permission, calling from no browser or from the Web UI's page. */
  async function authorizeOperator(request: FastifyRequest): Promise<void> {
    const principal = await callerOf(request);
    // Checked once the caller is known, so the event names whose credential a foreign page used.
    if (!originAllowed(request)) await refuse(request, originRefused(request), principal);
    if (principal.tenantId !== ROOT_TENANT) {
      await refuse(
        request,
        new IronflowError(
          'PERMISSION_DENIED',
          `decoding Temporal payloads is for the platform (root) tenant's operators: a sealed payload does not say which tenant's it is, and this credential belongs to tenant ${principal.tenantId}`,
          { reason: 'not-platform-operator' },
        ),
        principal,
      );
    }
    if (!grants(principal.permissions, DECODE_PERMISSION)) {
      await refuse(
        request,
        new IronflowError('PERMISSION_DENIED', `this credential lacks ${DECODE_PERMISSION}`, { reason: 'permission-missing', permission: DECODE_PERMISSION }),
        principal,
      );
    }
  }

  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'INTERNAL') request.log.error({ err: error }, 'codec error');
    return reply.status(httpStatusOf[apiError.code]).send({ error: apiError.toJSON() });
  });

  app.addHook('onSend', async (request, reply) => {
    if (request.headers.origin !== webUiOrigin) return;
    reply.header('access-control-allow-origin', webUiOrigin);
    reply.header('access-control-allow-credentials', 'true');
    reply.header('vary', 'origin');
  });

  // A preflight carries no credential: a foreign origin's is refused without an event.
  const preflight = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!originAllowed(request)) throw originRefused(request);
    return reply
      .status(204)
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'content-type, x-namespace, authorization')
      .header('access-control-max-age', '600')
      .send();
  };

  for (const direction of ['decode', 'encode'] as const) {
    const url = `${CODEC_PATH}/${direction}`;
    app.options(url, { schema: { hide: true } }, preflight);
    // The caller is checked before its body is read, let alone parsed.
    app.post(url, { bodyLimit: MAX_CODEC_BODY_BYTES, schema: { hide: true }, onRequest: authorizeOperator }, async (request) => {
      // The temporal CLI sends an empty X-Namespace when --namespace is left to its default.
      const namespace = request.headers['x-namespace'] || undefined;
      if (namespace !== undefined && namespace !== deps.config.temporal.namespace) {
        throw new IronflowError('INVALID_INPUT', `headers.x-namespace: this codec serves namespace ${deps.config.temporal.namespace}`, {
          path: 'headers.x-namespace',
        });
      }
      // Temporal's remote codec speaks JSON only (the console's form parser must not turn a form into one).
      const isJson = /^application\/json\b/i.test(request.headers['content-type'] ?? '');
      if (!isJson || typeof request.body !== 'object' || request.body === null) {
        throw new IronflowError('INVALID_INPUT', 'body: send {"payloads": [...]} as application/json, as Temporal\'s remote codec does', { path: 'body' });
      }
      const body = parseWith(payloadsJsonSchema, request.body);
      const payloads = body.payloads.map(fromJson);
      const result = direction === 'decode' ? await codec.decode(payloads) : await codec.encode(payloads);
      return { payloads: result.map(toJson) };
    });
  }
}
