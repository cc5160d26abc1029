// Headers every console answer carries, and console errors as HTML pages. The CSP allows
// scripts, styles and form posts from this origin only, no inline code and no framing.
import type { FastifyInstance } from 'fastify';
import { toApiError } from '../api/error-handler';
import { httpStatusOf } from '../core/errors';
import { html } from './html';
import { page } from './layout';

export const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; form-action 'self'";

export function registerConsoleSecurity(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    // Pages show one session's data: never kept by a cache.
    if (!request.url.startsWith('/console/assets/')) reply.header('cache-control', 'no-store');
  });

  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'INTERNAL') request.log.error({ err: error }, 'console error');
    return reply
      .status(httpStatusOf[apiError.code])
      .type('text/html; charset=utf-8')
      .send(
        page({
          title: 'Error',
          body: html`<p class="flash flash-error" role="alert">${apiError.code}: ${apiError.message}</p>
            <p><a href="/console/nodes">Back to the console</a></p>`,
        }),
      );
  });
}
