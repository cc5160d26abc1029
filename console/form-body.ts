// The console's forms post application/x-www-form-urlencoded bodies (the API itself takes
// JSON only): parsed into a flat record, small ones only (16 KiB).
import type { FastifyInstance } from 'fastify';

const MAX_FORM_BYTES = 16 * 1024;

export function acceptFormBodies(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_FORM_BYTES }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
}
