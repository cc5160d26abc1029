// A small JSON-over-HTTP(S) client for BMCs: node's http/https, so a pinned CA is a plain
// `ca` option (undici is not installed and fetch has no per-request CA), keep-alive per BMC,
// a deadline on every request, and bodies capped so a broken BMC cannot exhaust memory.
import http from 'node:http';
import https from 'node:https';

export interface JsonResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON, or the raw text when the body is not JSON, or null when empty. */
  body: unknown;
}

interface JsonClientOptions {
  /** Pinned CA certificates (PEM); the default trust store when absent. */
  caPem?: string;
  timeoutMs?: number;
  maxBodyBytes?: number;
}

/** A transport failure: the request may or may not have reached the BMC. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly sent: boolean,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

export class JsonClient {
  private readonly agent: http.Agent;
  private readonly isHttps: boolean;

  constructor(
    private readonly baseUrl: URL,
    private readonly options: JsonClientOptions = {},
  ) {
    this.isHttps = baseUrl.protocol === 'https:';
    this.agent = this.isHttps
      ? new https.Agent({ keepAlive: true, maxSockets: 2, ...(options.caPem ? { ca: options.caPem } : {}) })
      : new http.Agent({ keepAlive: true, maxSockets: 2 });
  }

  request(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<JsonResponse> {
    const url = new URL(path, this.baseUrl);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const maxBody = this.options.maxBodyBytes ?? 4 * 1024 * 1024;
    const lib = this.isHttps ? https : http;
    return new Promise((resolve, reject) => {
      let sent = false;
      const req = lib.request(
        url,
        {
          method,
          agent: this.agent,
          headers: {
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
            ...headers,
          },
          timeout: this.options.timeoutMs ?? 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBody) {
              req.destroy(new TransportError(`the BMC's answer is larger than ${maxBody} bytes`, true));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseBody(text) });
          });
          res.on('error', (error) => reject(new TransportError(error.message, true)));
        },
      );
      req.on('timeout', () => req.destroy(new TransportError(`no answer within ${this.options.timeoutMs ?? 30_000} ms`, sent)));
      req.on('error', (error) => reject(error instanceof TransportError ? error : new TransportError(describeSocketError(error), sent)));
      req.on('finish', () => {
        sent = true;
      });
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function parseBody(text: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function describeSocketError(error: Error & { code?: string }): string {
  // The TLS codes say what to fix: the pinned CA, or the BMC's certificate.
  if (error.code === 'SELF_SIGNED_CERT_IN_CHAIN' || error.code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || error.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE') {
    return `TLS: the BMC's certificate is not signed by the pinned or system CA (${error.code}); pin the BMC's CA (caPem)`;
  }
  if (error.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `TLS: the BMC's certificate does not name this address (${error.message})`;
  return error.code ? `${error.code}: ${error.message}` : error.message;
}
