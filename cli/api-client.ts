// A small HTTP client of the REST API: the CLI's, and the tests' (they talk to a real server).
import type { IncomingHttpHeaders } from 'node:http';
import { IronflowError, isIronflowError, type ErrorCode } from '../core/errors';
import { trustedFetch, type ApiAnswer, type ApiTrust, type FetchLike } from '../services/trusted-fetch';

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

function headersOf(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  return headers;
}

export class ApiClient {
  private readonly fetch: FetchLike;

  constructor(
    readonly baseUrl: string,
    private readonly bearer?: string,
    /** The API's CA (--ca-file, IRONFLOW_CA_FILE) when it is not in the system's store. */
    private readonly trust: ApiTrust = {},
  ) {
    this.fetch = trustedFetch(trust);
  }

  withCredential(bearer: string): ApiClient {
    return new ApiClient(this.baseUrl, bearer, this.trust);
  }

  /** The raw answer, whatever its status. */
  async request<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    let response: ApiAnswer;
    try {
      response = await this.fetch(new URL(path, this.baseUrl), {
        method,
        headers: {
          ...(this.bearer ? { authorization: `Bearer ${this.bearer}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      if (isIronflowError(err)) throw err;
      const reason = (err as Error).message;
      const caHint =
        this.baseUrl.startsWith('https:') && !this.trust.caPems?.length ? '; an https API with a private CA needs --ca-file or IRONFLOW_CA_FILE' : '';
      throw new IronflowError(
        'INTERNAL',
        `cannot reach the Ironflow API at ${this.baseUrl} (${reason}); is \`npm start\` running? (set IRONFLOW_API_URL otherwise)${caHint}`,
      );
    }
    const text = response.body.toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed as T, headers: headersOf(response.headers) };
  }

  /** The answer's body, or the API's error thrown as an IronflowError. */
  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.request<T | { error: { code: ErrorCode; message: string; details: Record<string, unknown> } }>(method, path, body);
    if (response.status >= 400) {
      const error = (response.body as { error?: { code: ErrorCode; message: string; details: Record<string, unknown> } })?.error;
      throw new IronflowError(error?.code ?? 'INTERNAL', error?.message ?? `HTTP ${response.status}`, error?.details ?? {});
    }
    return response.body as T;
  }
}
