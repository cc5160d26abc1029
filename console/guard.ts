// Who is asking: the signed-in session of a console request (else a redirect to sign-in),
// and a form's CSRF token checked against that session's.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IronflowError } from '../core/errors';
import type { ApiProblem } from './api-calls';
import { cookieHeader, readCookie, SESSION_COOKIE } from './cookies';
import { tokensMatch, type ConsoleSession, type ConsoleSessions, type Flash } from './session';

export const isHttps = (request: FastifyRequest): boolean => request.protocol === 'https';

/** The session, or undefined after answering with a redirect to the sign-in page. */
export function signedIn(sessions: ConsoleSessions, request: FastifyRequest, reply: FastifyReply): ConsoleSession | undefined {
  const session = sessions.use(readCookie(request.headers.cookie, SESSION_COOKIE));
  if (!session) void reply.redirect('/console/sign-in', 303);
  return session;
}

/** A POST whose form lacks this session's token was not made by a console page: refused. */
export function checkCsrf(session: ConsoleSession, body: unknown): void {
  const given = body && typeof body === 'object' && 'csrf' in body && typeof body.csrf === 'string' ? body.csrf : undefined;
  if (!tokensMatch(session.csrfToken, given))
    throw new IronflowError('PERMISSION_DENIED', 'this form is stale or came from another site: reload the page and try again');
}

/** Ends the session (sign-out, or a credential the API no longer accepts) and clears its cookie. */
export function endSession(sessions: ConsoleSessions, session: ConsoleSession, request: FastifyRequest, reply: FastifyReply): void {
  sessions.end(session.id);
  void reply.header('set-cookie', cookieHeader(SESSION_COOKIE, '', { secure: isHttps(request), maxAgeSeconds: 0 }));
}

/**
 * The API no longer takes this session's credential (revoked): the session ends and the
 * browser goes to sign-in. True when it answered so.
 */
export function signedOutBy(problem: ApiProblem, sessions: ConsoleSessions, session: ConsoleSession, request: FastifyRequest, reply: FastifyReply): boolean {
  if (problem.code !== 'UNAUTHENTICATED') return false;
  endSession(sessions, session, request, reply);
  void reply.redirect('/console/sign-in', 303);
  return true;
}

/** The flash the next page shows, taken from the session (shown once). */
export function takeFlash(session: ConsoleSession): Flash | undefined {
  const flash = session.flash;
  delete session.flash;
  return flash;
}
