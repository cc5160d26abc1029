// The agent's HTTP client for the control plane: plain JSON for joining, and requests
// signed with the agent's key and certificate (services/pki/agent-request.ts) for the rest.
// Every request has a deadline, so a hung control plane looks like a silent one.
import type { KeyObject } from 'node:crypto';
import { errorCodes, IronflowError, isIronflowError, type ErrorCode } from '../../core/errors';
import type { JoinAnswer } from '../../core/schemas/join';
import { signAgentRequest } from '../../services/pki/agent-request';
import { trustedFetch, type ApiAnswer, type ApiTrust, type FetchLike } from '../../services/trusted-fetch';

export interface Signer {
  key: KeyObject;
  certificatePem(): string;
}

/**
 * A join is one transaction that may wait 10 s for the database and run 15 s (services/db.ts):
 * its answer is awaited that long, since a join given up on while the control plane completes
 * it has spent its token, and the retry is refused.
 */
const JOIN_TIMEOUT_MS = 30_000;

/** An answer's JSON, or null for an empty or unparsable body (a proxy's error page, a 204). */
function parseAnswer(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
}

export class ControlPlaneUnreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ControlPlaneUnreachable';
  }
}

export class ControlPlaneClient {
  private readonly fetch: FetchLike;

  constructor(
    readonly baseUrl: string,
    /** How long a request waits for its answer (a request sent again may wait longer: agent/common/until-answered.ts). */
    readonly timeoutMs = 5_000,
    /** The CA the API's certificate chains to (site: control_plane_ca_file; ramdisk, node: a pin); the system's when absent. */
    trust: ApiTrust = {},
  ) {
    this.fetch = trustedFetch(trust);
  }

  /** POST without a credential (renew: the certificate is in the body). */
  post<T>(path: string, body: unknown, timeoutMs = this.timeoutMs): Promise<T> {
    return this.send<T>(path, JSON.stringify(body), {}, timeoutMs);
  }

  /** POST /v1/join: the token and the CSR are in the body. */
  join(body: unknown): Promise<JoinAnswer> {
    return this.send<JoinAnswer>('/v1/join', JSON.stringify(body), {}, JOIN_TIMEOUT_MS);
  }

  /** GET without a credential (the node CA). */
  get<T>(path: string): Promise<T> {
    return this.send<T>(path, undefined, {});
  }

  /** POST signed by the agent's key over the exact bytes sent. */
  signedPost<T>(signer: Signer, path: string, body: unknown, timeoutMs = this.timeoutMs): Promise<T> {
    const text = JSON.stringify(body);
    const headers = signAgentRequest(signer.key, signer.certificatePem(), { method: 'POST', pathAndQuery: path, body: text });
    return this.send<T>(path, text, headers, timeoutMs);
  }

  private async send<T>(path: string, text: string | undefined, headers: Record<string, string>, timeoutMs = this.timeoutMs): Promise<T> {
    let response: ApiAnswer;
    try {
      response = await this.fetch(`${this.baseUrl}${path}`, {
        ...(text === undefined ? { method: 'GET', headers } : { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: text }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      if (isIronflowError(error)) throw error; // a pin no server chain matches, a CA without https: not a transient failure
      throw new ControlPlaneUnreachable(`control plane ${this.baseUrl} did not answer ${path}: ${(error as Error).message}`);
    }
    const answer = parseAnswer(response.body) as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null;
    if (response.status >= 200 && response.status < 300) return answer as T;
    const code = errorCodes.includes(answer?.error?.code as ErrorCode) ? (answer?.error?.code as ErrorCode) : 'INTERNAL';
    throw new IronflowError(code, answer?.error?.message ?? `control plane answered ${response.status} to ${path}`, answer?.error?.details ?? {});
  }
}
