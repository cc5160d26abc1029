// The Fastify server: zod type provider, OpenAPI from the same schemas (UI at /docs),
// request ids, logs that redact bearers and secrets, the routes (api/routes/index.ts); hostile
// bodies and sources refused before parsing (body-limits.ts, rate-limit.ts).
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import { jsonSchemaTransformObject, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ApiTlsMaterial } from '../services/api-tls';
import { DEFAULT_BODY_LIMIT, registerBodyLimits } from './body-limits';
import type { ApiContext } from './context';
import { answerClientError, answerFrameworkError, registerErrorHandler } from './error-handler';
import { withErrorResponses } from './openapi-errors';
import { registerRequestMetrics } from './request-metrics';
import { AnsweredRequestLog } from './access-log';
import { openLogFile } from './log-file';
import { registerRefusalRateLimit } from './rate-limit';
import { registerRoutes } from './routes';
import { responseSerializerCompiler } from './response-serializer';

export interface ServerOptions {
  /**
   * false: no logs; otherwise the level and where lines go: `file` (api/log-file.ts: opened
   * 0600, and what an INTERNAL answer names) or, for tests, a stream.
   */
  logger?: false | { level: string; stream?: NodeJS.WritableStream; file?: string };
  /** Serve HTTPS with this certificate (and chain) and key (services/api-tls.ts); plain http otherwise. */
  https?: ApiTlsMaterial;
}

/** Paths whose values never reach a log line. */
const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body.token',
  'req.body.credential',
  'req.body.password',
  'res.body.token',
  'res.body.credential',
];

export async function buildServer(ctx: ApiContext, options: ServerOptions = {}): Promise<FastifyInstance> {
  const logFile = options.logger ? options.logger.file : undefined;
  const logStream = logFile ? openLogFile(logFile) : undefined;
  const app = Fastify({
    ...(options.https ? { https: options.https } : {}),
    logger: options.logger
      ? { level: options.logger.level, stream: logStream ?? options.logger.stream, redact: { paths: redactedPaths, censor: '[redacted]' } }
      : false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // One line per request, when it is answered (api/access-log.ts).
    logController: new AnsweredRequestLog(),
    bodyLimit: DEFAULT_BODY_LIMIT,
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializerCompiler(ctx.config.api.checkResponses));
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  if (logStream) app.addHook('onClose', async () => new Promise<void>((resolve) => logStream.end(resolve)));
  registerErrorHandler(app, logFile);
  registerRefusalRateLimit(app);
  registerBodyLimits(app);
  registerRequestMetrics(app);

  await app.register(swagger, {
    openapi: {
      info: { title: 'Ironflow API', version: '0.1.0', description: 'Bare-metal provisioning on Temporal.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: withErrorResponses,
    // Recursive schemas (a BMC operation's JSON result) become components the routes $ref.
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await registerRoutes(app, ctx);
  return app;
}
