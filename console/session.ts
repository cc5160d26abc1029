// Console sign-in sessions, in memory: the API credential stays on the server, keyed by a
// random id the browser holds in a cookie. A session ends 8 h after sign-in or after 30 min
// without a request, whichever comes first; a restart of the API signs everyone out.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../services/credentials';
import { RecentCache } from '../core/recent-cache';

const SESSION_IDLE_MS = 30 * 60 * 1000;
const SESSION_LIFETIME_MS = 8 * 60 * 60 * 1000;
/** Beyond this many live sessions the least recently used one is signed out. */
const MAX_SESSIONS = 1000;

export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

export interface ConsoleSession {
  id: string;
  /** The bearer the pages call the API with; never rendered, logged or put in a URL. */
  credential: string;
  principal: Principal;
  /** Every form carries it; a POST without it is refused. */
  csrfToken: string;
  createdAt: number;
  lastUsedAt: number;
  /** Shown once by the next page (the outcome of a form's POST). */
  flash?: Flash;
}

export const randomToken = (): string => randomBytes(32).toString('base64url');

/** Compares two tokens in constant time (a mismatch of length is no match). */
export function tokensMatch(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

export class ConsoleSessions {
  /** Beyond MAX_SESSIONS the least recently used session is signed out. */
  private readonly sessions = new RecentCache<string, ConsoleSession>(MAX_SESSIONS);

  constructor(private readonly now: () => number = Date.now) {}

  create(credential: string, principal: Principal): ConsoleSession {
    this.sweep();
    const at = this.now();
    const session: ConsoleSession = { id: randomToken(), credential, principal, csrfToken: randomToken(), createdAt: at, lastUsedAt: at };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session of this id (its idle clock restarted), or undefined. */
  use(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    if (this.expired(session)) {
      this.sessions.delete(id);
      return undefined;
    }
    session.lastUsedAt = this.now();
    return session;
  }

  end(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  private expired(session: ConsoleSession): boolean {
    const at = this.now();
    return at - session.lastUsedAt > SESSION_IDLE_MS || at - session.createdAt > SESSION_LIFETIME_MS;
  }

  private sweep(): void {
    for (const [id, session] of this.sessions) if (this.expired(session)) this.sessions.delete(id);
  }
}
