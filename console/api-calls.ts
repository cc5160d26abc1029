// The console acts through the API's own routes (app.inject with the session's credential),
// so authentication, permissions, tenant scoping and input checks are exactly the API's.
import type { FastifyInstance } from 'fastify';

export interface ApiProblem {
  status: number;
  code: string;
  message: string;
}

/** How a page shows a refusal: the API's code and message. */
export const problemText = (problem: ApiProblem): string => `${problem.code}: ${problem.message}`;

export type ApiAnswer<T> = { ok: true; data: T } | { ok: false; problem: ApiProblem };

interface ApiCaller {
  get<T>(url: string): Promise<ApiAnswer<T>>;
  post<T>(url: string, body: Record<string, unknown>): Promise<ApiAnswer<T>>;
}

function problemOf(status: number, body: string): ApiProblem {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    if (typeof parsed.error?.code === 'string' && typeof parsed.error.message === 'string')
      return { status, code: parsed.error.code, message: parsed.error.message };
  } catch {
    // not JSON: fall through
  }
  return { status, code: 'INTERNAL', message: `the API answered HTTP ${status}` };
}

/** Calls carry the console request's id, so the API's log ties them to the page. */
export function apiCaller(app: FastifyInstance, credential: string, requestId: string): ApiCaller {
  const call = async <T>(method: 'GET' | 'POST', url: string, body?: Record<string, unknown>): Promise<ApiAnswer<T>> => {
    const response = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${credential}`, 'x-request-id': requestId, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
    if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true, data: response.json() as T };
    return { ok: false, problem: problemOf(response.statusCode, response.body) };
  };
  return { get: (url) => call('GET', url), post: (url, body) => call('POST', url, body) };
}

/** `/v1/x?a=1&b=2` with each value encoded. */
export function apiUrl(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  return `${path}?${params.toString()}`;
}
