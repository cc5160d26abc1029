// Refusing hostile bodies before parsing them: a size limit per route group (agents and join
// are unauthenticated, so theirs is small), a URL length limit on those routes, and a JSON
// nesting limit checked by a linear scan of the raw text before JSON.parse builds anything.
// Each refusal is INVALID_INPUT naming `body` or `url`, never a 500.
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { formatPath, IronflowError } from '../core/errors';

const KiB = 1024;
/** Operators' routes (profiles, images metadata…): the server-wide limit. */
export const DEFAULT_BODY_LIMIT = 1024 * KiB;
/**
 * No API document nests deeper than a dozen levels; 64 leaves room for profile documents
 * and bounds the work (and recursion) of everything that walks a parsed body.
 */
const MAX_JSON_DEPTH = 64;

/** The routes an agent or anyone on the network calls without an API credential. */
export function isUnauthenticatedRoute(routeUrl: string): boolean {
  return routeUrl.startsWith('/v1/agents/') || routeUrl === '/v1/join' || routeUrl.startsWith('/v1/join/');
}

/**
 * Unauthenticated routes: a heartbeat with every bounded list full (1024 images, 256
 * discovered machines) is about 190 KiB, a BMC ledger record carries a command's result;
 * everything else (join's token and CSR, a step's ids) is a few KiB.
 */
function unauthenticatedBodyLimit(routeUrl: string): number {
  return routeUrl === '/v1/agents/session' || routeUrl === '/v1/agents/bmc-operations/put' ? 256 * KiB : 64 * KiB;
}

/** Those routes take ids in their bodies, never in a query string. */
const MAX_UNAUTHENTICATED_URL_LENGTH = 2 * KiB;

const tooLarge = (limit: number) =>
  new IronflowError('INVALID_INPUT', `body: larger than this route's limit of ${limit / KiB} KiB`, {
    path: 'body',
    reason: 'body-too-large',
    limitBytes: limit,
  });

/** True when the JSON text nests objects/arrays deeper than `max` (brackets inside strings do not count). */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** The depth check every JSON parser of the API runs before parsing. */
export function refuseDeepJson(text: string): void {
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new IronflowError('INVALID_INPUT', `body: JSON nested deeper than ${MAX_JSON_DEPTH} levels`, {
      path: 'body',
      reason: 'too-deep',
      maxDepth: MAX_JSON_DEPTH,
    });
  }
}

/**
 * Text no store takes: NUL (PostgreSQL's text and jsonb refuse it) and a lone surrogate (the
 * database driver cannot encode one; in a `u` regex a well-formed pair is one code point and
 * does not match). Only a `\u0000` or `\ud800`-style escape can put either in a JSON string.
 */
const UNSTORABLE_TEXT = /\u0000|\p{Cs}/u;

/**
 * Where a parsed JSON value holds a string (or key) no store takes: every such field reaching
 * the database was a 500 (a lone surrogate anywhere, NUL on PostgreSQL), and no log or event
 * should carry one. Walked after the depth check, so the recursion is bounded.
 */
function unstorableTextAt(value: unknown, path: Array<string | number> = []): Array<string | number> | undefined {
  if (typeof value === 'string') return UNSTORABLE_TEXT.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = unstorableTextAt(item, [...path, i]);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE_TEXT.test(key)) return path;
      const found = unstorableTextAt(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/** The text check every JSON parser of the API runs after parsing (and every route on its path and query): INVALID_INPUT naming the field. */
export function refuseUnstorableText(value: unknown, where = 'body'): void {
  const at = unstorableTextAt(value);
  if (at === undefined) return;
  const path = formatPath(at) || where;
  throw new IronflowError('INVALID_INPUT', `${path}: holds a NUL character or a lone surrogate (\\u0000, \\ud800…), which is not text`, {
    path,
    reason: 'unstorable-text',
  });
}

/** Counts a streamed body's bytes and fails with the API's error past the limit (chunked bodies have no length to check up front). */
class BodyLimit extends Transform {
  private received = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    if (this.received > this.limit) callback(tooLarge(this.limit));
    else callback(null, chunk);
  }
}

const hasBody = (request: FastifyRequest) => request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;

/** Registers the limits on the root instance, before the route groups. */
export function registerBodyLimits(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (isUnauthenticatedRoute(route.url)) route.bodyLimit = Math.min(route.bodyLimit ?? DEFAULT_BODY_LIMIT, unauthenticatedBodyLimit(route.url));
  });

  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.url;
    if (route !== undefined && isUnauthenticatedRoute(route) && request.url.length > MAX_UNAUTHENTICATED_URL_LENGTH) {
      throw new IronflowError('INVALID_INPUT', `url: longer than ${MAX_UNAUTHENTICATED_URL_LENGTH} characters; this route takes no query string`, {
        path: 'url',
        reason: 'url-too-long',
      });
    }
  });

  // Path ids and query values are decoded text too (`%00`): refused before a route's schema or a lookup sees them.
  app.addHook('preValidation', async (request) => {
    refuseUnstorableText(request.params, 'params');
    refuseUnstorableText(request.query, 'query');
  });

  app.addHook('preParsing', async (request, _reply, payload) => {
    if (!hasBody(request)) return payload;
    const limit = request.routeOptions.bodyLimit ?? DEFAULT_BODY_LIMIT;
    if (Number(request.headers['content-length']) > limit) throw tooLarge(limit);
    const limited = new BodyLimit(limit);
    payload.on('error', (error) => limited.destroy(error));
    return payload.pipe(limited);
  });

  // Fastify's own JSON parser (prototype-poisoning checks included), after the depth scan.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    try {
      refuseDeepJson(text);
    } catch (error) {
      return done(error as IronflowError, undefined);
    }
    // The default parser answers through the callback (errors included); its return value carries nothing.
    void parseJson(request, text, (error, parsed) => {
      if (error) return done(error, undefined);
      try {
        refuseUnstorableText(parsed);
      } catch (refused) {
        return done(refused as IronflowError, undefined);
      }
      done(null, parsed);
    });
  });
}
