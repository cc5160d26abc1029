// The HTTP transport of the Ironflow API's clients (the CLI's, the agents'): node:http and
// node:https with keep-alive agents, trusting the system's CAs or only a given one: the CLI's
// --ca-file, a site agent's control_plane_ca_file, a ramdisk's or a node's pin. Not Node's
// built-in fetch: it takes no per-request CA (undici is not installed), and its WHATWG streams
// cost a fleet bench's agents a tenth or more of their CPU (bench/README.md). Answers are capped.
import http from 'node:http';
import https from 'node:https';
import { findPinnedCa } from './ca-pin';
import { IronflowError } from '../core/errors';

export interface ApiTrust {
  /** CA certificates (PEM) the API's certificate must chain to; nothing else is trusted. */
  caPems?: string[];
  /** A CA pinned by its key (sha256/…=), found in the chain the API sends (services/ca-pin.ts). */
  caPin?: string;
}

export interface ApiRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** An answer read whole: its status, headers and body bytes. */
export interface ApiAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type FetchLike = (url: string | URL, request: ApiRequest) => Promise<ApiAnswer>;

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
    return new Error(`TLS: the API's certificate does not chain to a CA this client trusts (${error.code}); check the CA file or pin`);
  if (error.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return new Error(`TLS: the API's certificate does not name this address (${error.message})`);
  return error;
}

function requestVia(agent: http.Agent, url: URL, request: ApiRequest): Promise<ApiAnswer> {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: request.method ?? 'GET',
        agent,
        headers: { ...request.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        ...(request.signal ? { signal: request.signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) req.destroy(new Error(`the API's answer is larger than ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', (error) => reject(describe(error)));
    req.end(body);
  });
}

/** Picks the connection pool for a request's URL (and, for a pin, finds its CA first). */
type AgentFor = (target: URL) => http.Agent | Promise<http.Agent>;

/** The system's CAs, over http or https. */
function systemAgents(): AgentFor {
  const plain = new http.Agent({ keepAlive: true });
  const tls = new https.Agent({ keepAlive: true });
  return (target) => (target.protocol === 'https:' ? tls : plain);
}

/** Only the given CA, or the CA the pin names (resolved at the first request and kept: one handshake), over https only. */
function caAgent(trust: ApiTrust): AgentFor {
  let agent: Promise<https.Agent> | undefined = trust.caPems?.length ? Promise.resolve(new https.Agent({ keepAlive: true, ca: trust.caPems })) : undefined;
  return (target) => {
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
    return agent;
  };
}

/** A fetch trusting `trust`: the system's CAs when it names none (http or https), else https with only that CA. */
export function trustedFetch(trust: ApiTrust = {}): FetchLike {
  const agentFor = trust.caPems?.length || trust.caPin ? caAgent(trust) : systemAgents();
  return async (url, request) => {
    const target = new URL(url);
    return requestVia(await agentFor(target), target, request);
  };
}
