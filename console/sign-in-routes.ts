// Sign-in and sign-out. The credential is verified as the API verifies a bearer
// (services/credentials authenticate), then kept only in the server-side session.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { authenticate } from '../services/credentials';
import type { Db } from '../services/db';
import { isIronflowError } from '../core/errors';
import { cookieHeader, readCookie, SESSION_COOKIE, SIGN_IN_COOKIE } from './cookies';
import { checkCsrf, endSession, isHttps, signedIn } from './guard';
import { signInPage } from './pages/sign-in';
import { randomToken, tokensMatch, type ConsoleSessions } from './session';

const SIGN_IN_FORM_SECONDS = 60 * 60;

const signInFormSchema = z.object({ csrf: z.string().max(128).optional(), credential: z.string().trim().min(1).max(512) });

/** The sign-in form with a fresh double-submit token in the form and in a cookie. */
function showSignIn(request: FastifyRequest, reply: FastifyReply, status: number, error?: string) {
  const formToken = randomToken();
  return reply
    .status(status)
    .header('set-cookie', cookieHeader(SIGN_IN_COOKIE, formToken, { secure: isHttps(request), maxAgeSeconds: SIGN_IN_FORM_SECONDS }))
    .type('text/html; charset=utf-8')
    .send(signInPage({ formToken, ...(error ? { error } : {}) }));
}

export function signInRoutes(app: FastifyInstance, sessions: ConsoleSessions, db: Db): void {
  app.get('/console/sign-in', async (request, reply) => {
    if (sessions.use(readCookie(request.headers.cookie, SESSION_COOKIE))) return reply.redirect('/console/discovery', 303);
    return showSignIn(request, reply, 200);
  });

  app.post('/console/sign-in', async (request, reply) => {
    const form = signInFormSchema.safeParse(request.body);
    if (!form.success) return showSignIn(request, reply, 400, 'INVALID_INPUT: enter an API credential (ifk_…)');
    // No session yet: the form's token must match the cookie only a console page could have set.
    const expected = readCookie(request.headers.cookie, SIGN_IN_COOKIE);
    if (!expected || !tokensMatch(expected, form.data.csrf)) {
      return showSignIn(request, reply, 403, 'PERMISSION_DENIED: this sign-in form is stale or came from another site; try again');
    }
    try {
      const principal = await authenticate(db, `Bearer ${form.data.credential}`);
      const session = sessions.create(form.data.credential, principal);
      const secure = isHttps(request);
      return reply
        .header('set-cookie', [cookieHeader(SESSION_COOKIE, session.id, { secure }), cookieHeader(SIGN_IN_COOKIE, '', { secure, maxAgeSeconds: 0 })])
        .redirect('/console/discovery', 303);
    } catch (error) {
      if (!isIronflowError(error)) throw error;
      request.log.info({ code: error.code }, 'console sign-in refused');
      return showSignIn(request, reply, 401, `${error.code}: ${error.message}`);
    }
  });

  app.post('/console/sign-out', async (request, reply) => {
    const session = signedIn(sessions, request, reply);
    if (!session) return reply;
    checkCsrf(session, request.body);
    endSession(sessions, session, request, reply);
    return reply.redirect('/console/sign-in', 303);
  });
}
