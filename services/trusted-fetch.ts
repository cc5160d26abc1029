// fetch for clients of the Ironflow API that trust a given CA instead of (or as well as not)
// the system's: the CLI's --ca-file, a site agent's control_plane_ca_file, a ramdisk's or a
// node's pin. Node's built-in fetch takes no per-request CA (undici is not installed), so a
// request with a CA goes through node:https with an Agent holding it; answers are capped.
import https from 'node:https';
import { findPinnedCa } from './ca-pin';
import { IronflowError } from '../core/errors';

export interface ApiTrust {
  /** CA certificates (PEM) the API's certificate must chain to; nothing else is trusted. */
  caPems?: string[];
  /** A CA pinned by its key (sha256/…=), found in the chain the API sends (services/ca-pin.ts). */
  caPin?: string;
}

export type FetchLike = (url: string | URL, init: RequestInit) => Promise<Response>;

/** API answers are small JSON documents; more than this is a broken or hostile server. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const PIN_HANDSHAKE_TIMEOUT_MS = 10_000;

const verifyCodes = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
]);

function describe(error: Error & { code?: string }): Error {
  if (error.code && verifyCodes.has(error.code))
    return new Error(`TLS: the API's certificate is not signed by the trusted CA (${error.code}); check the CA file or pin`);
  if (error.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return new Error(`TLS: the API's certificate does not name this address (${error.message})`);
  return error;
}

function headersOf(init: RequestInit): Record<string, string> {
  return Object.fromEntries(new Headers(init.headers).entries());
}

function requestVia(agent: https.Agent, url: URL, init: RequestInit): Promise<Response> {
  const body = typeof init.body === 'string' ? Buffer.from(init.body) : undefined;
  if (init.body !== undefined && init.body !== null && body === undefined) throw new TypeError('trustedFetch sends string bodies only');
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: init.method ?? 'GET',
        agent,
        headers: { ...headersOf(init), ...(body ? { 'content-length': String(body.length) } : {}) },
        ...(init.signal ? { signal: init.signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) req.destroy(new Error(`the API's answer is larger than ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
          }
          const status = res.statusCode ?? 502;
          resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers }));
        });
        res.on('error', reject);
      },
    );
    req.on('error', (error) => reject(describe(error)));
    req.end(body);
  });
}

/**
 * A fetch trusting `trust`: the global fetch (system CAs) when it names no CA, else node:https
 * with only that CA. A pin is resolved at the first request and kept (one handshake).
 */
export function trustedFetch(trust: ApiTrust = {}): FetchLike {
  if (!trust.caPems?.length && !trust.caPin) return (url, init) => fetch(url, init);
  let agent: Promise<https.Agent> | undefined = trust.caPems?.length ? Promise.resolve(new https.Agent({ keepAlive: true, ca: trust.caPems })) : undefined;
  return async (url, init) => {
    const target = new URL(url);
    if (target.protocol !== 'https:')
      throw new IronflowError('INVALID_CONFIG', `a CA is configured for the Ironflow API but ${target.protocol}//${target.host} is not https`, {
        reason: 'ca-without-https',
      });
    if (!agent) {
      const pending = findPinnedCa(target, trust.caPin as string, PIN_HANDSHAKE_TIMEOUT_MS).then((ca) => new https.Agent({ keepAlive: true, ca }));
      // A failed lookup (server down, wrong chain) is tried again at the next request.
      agent = pending.catch((error: unknown) => {
        agent = undefined;
        throw error;
      });
    }
    return requestVia(await agent, target, init);
  };
}
