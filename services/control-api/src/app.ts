// Builds the control API as a Fastify app without listening: server.ts listens, tests inject.
import { Metrics } from '@metronome/observability';
import { duplicateRedis, loadScripts, redisKeys, SharedRateLimit, type RedisClient } from '@metronome/redis';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { authenticate } from './auth.js';
import { JSON_BODY_LIMIT } from './body-limit.js';
import { clientErrorHandler, installUrlLimit } from './client-errors.js';
import { registerConsole } from './console.js';
import { createContext, type ApiContext, type AppDeps } from './context.js';
import { installErrorHandler, toApiError } from './error-handler.js';
import { ApiError, errorBody } from './errors.js';
import { registerOpenApi } from './openapi.js';
import { StreamSlots } from './events/stream-slots.js';
import { AuthLimiter, LIMIT_ANSWER_MS } from './rate-limiter.js';
import { accountRoutes } from './routes/accounts.js';
import { audienceRoutes } from './routes/audiences.js';
import { campaignPreviewRoutes } from './routes/campaign-previews.js';
import { campaignRoutes } from './routes/campaigns.js';
import { chatDirectoryRoutes } from './routes/chat-directory.js';
import { erasureRoutes } from './routes/erasure.js';
import { eventRoutes } from './routes/events.js';
import { exportRoutes } from './routes/export.js';
import { mediaRoutes } from './routes/media.js';
import { pairingRoutes } from './routes/pairing.js';
import { sessionImportRoutes } from './routes/session-import.js';
import { telegramSignInRoutes } from './routes/telegram-sign-in.js';
import { platformReceiptRoutes } from './routes/platform-receipts.js';
import { operationRoutes } from './routes/operations.js';
import { runRoutes } from './routes/runs.js';
import { tenantRoutes } from './routes/tenants.js';
import { testSendRoutes } from './routes/test-sends.js';
import { webhookRoutes } from './routes/webhooks.js';

export type { AppDeps } from './context.js';

const LIMITER_CONNECT_WAIT_MS = 2_000;

export interface AppOptions {
  sseHeartbeatMs?: number;
  /** told of every route as it is registered; the isolation matrix derives its route list from it */
  onRoute?: (route: { method: string | string[]; url: string }) => void;
  /** LIMIT_ANSWER_MS; tests of the limits' counting on a busy machine lengthen it */
  limitsTimeoutMs?: number;
}

export async function buildApp(deps: AppDeps, options: AppOptions = {}): Promise<FastifyInstance> {
  const ctx = createContext(deps, deps.metrics ?? new Metrics('control-api'));
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: JSON_BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
    // Only a configured proxy's X-Forwarded-For names the client (the failure limit is per client address).
    trustProxy: deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false,
    // Requests the HTTP parser refuses (431, malformed lines and headers) get the contract's body too.
    clientErrorHandler,
    // A path that is not valid percent-encoding (`/v1/campaigns/%`) is refused by the router, before the error handler.
    frameworkErrors: (err, req, res) => {
      const reply = res as FastifyReply;
      const known = err.code === 'FST_ERR_BAD_URL' ? null : toApiError(err, req.headers['content-type']);
      if (known)
        return reply
          .code(known.statusCode)
          .headers(known.headers)
          .send(errorBody(known.code, known.message, known.details));
      return reply.code(404).send(errorBody('not_found', 'no such resource'));
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandler(app);
  installUrlLimit(app);
  acceptEmptyJsonBody(app);
  app.decorateRequest('caller', null as never);
  const onRoute = options.onRoute;
  if (onRoute) app.addHook('onRoute', (route) => onRoute({ method: route.method, url: route.url }));

  // Labelled by the route pattern, never the raw URL: ids and junk paths would make a series each.
  app.addHook('onResponse', async (req, reply) => {
    ctx.metrics.httpRequestDuration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  const limiterRedis = failFastRedis(app, deps);
  const limitsAnswerMs = options.limitsTimeoutMs ?? LIMIT_ANSWER_MS;
  await registerOpenApi(app);
  await app.register(operationRoutes, { ctx });
  registerConsole(app);
  await app.register(platformReceiptRoutes, { ctx, prefix: '/v1/platform' });
  await app.register(
    async (v1) => {
      v1.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, security: [{ bearer: [] }] };
      });
      v1.addHook('onRequest', authenticate(ctx, authLimits(limiterRedis, ctx, limitsAnswerMs)));
      await v1.register(tenantRoutes, { ctx });
      await v1.register(accountRoutes, { ctx });
      await v1.register(chatDirectoryRoutes, { ctx });
      await v1.register(pairingRoutes, { ctx, ...(deps.whatsappPairing && { pairing: deps.whatsappPairing }) });
      await v1.register(sessionImportRoutes, { ctx, ...(deps.whatsappPairing && { pairing: deps.whatsappPairing }) });
      await v1.register(telegramSignInRoutes, { ctx, ...(deps.telegramSignIn && { signIn: deps.telegramSignIn }) });
      await v1.register(mediaRoutes, { ctx });
      await v1.register(audienceRoutes, { ctx });
      await v1.register(campaignRoutes, { ctx });
      await v1.register(campaignPreviewRoutes, { ctx });
      await v1.register(testSendRoutes, { ctx });
      await v1.register(runRoutes, { ctx });
      await v1.register(webhookRoutes, { ctx });
      await v1.register(erasureRoutes, { ctx, ...(deps.accountLogout && { logout: deps.accountLogout }) });
      await v1.register(exportRoutes, { ctx });
      const slots = new StreamSlots(limiterRedis, ctx.config.keyPrefix, ctx.config.sseMaxPerToken, () => ctx.clock.now(), ctx.logger);
      await v1.register(eventRoutes, { ctx, slots, ...(options.sseHeartbeatMs !== undefined && { heartbeatMs: options.sseHeartbeatMs }) });
    },
    { prefix: '/v1' },
  );
  return app;
}

// A bodiless command sent with `Content-Type: application/json` reads as "no body" (a route's schema still wants its body);
// text/plain is a wrong Content-Type (415), and only UTF-8 is read: another charset is refused, not misread.
function acceptEmptyJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const charset = charsetOf(req.headers['content-type']);
    if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
      done(
        new ApiError(415, 'unsupported_media_type', 'unsupported charset', [{ field: 'content-type', message: 'the only charset accepted is utf-8' }]),
        undefined,
      );
      return;
    }
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') done(null, undefined);
    else json(req, text, done);
  });
}

function charsetOf(header: string | undefined): string | null {
  const match = header === undefined ? null : /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(header);
  return match ? (match[1] ?? '').toLowerCase() : null;
}

/**
 * The limits' own Redis connection, failing at once while Redis is away: the shared one waits for Redis, which would hold every
 * request; the limits fail open instead.
 */
function failFastRedis(app: FastifyInstance, deps: AppDeps): RedisClient {
  const redis = duplicateRedis(deps.redis, {
    connectionName: 'metronome-api-ratelimit',
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    commandTimeout: 10_000,
  });
  // the shared connection already logs Redis errors; the limits log their own fallback
  redis.on('error', () => undefined);
  app.addHook('onClose', async () => {
    redis.disconnect();
  });
  // Without an offline queue the first requests would go unlimited: serve once Redis is up, or a short wait says it is away.
  app.addHook('onReady', async () => {
    if (redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, LIMITER_CONNECT_WAIT_MS);
      redis.on('ready', done);
    });
  });
  return redis;
}

function authLimits(redis: RedisClient, ctx: ApiContext, answerMs: number): AuthLimiter {
  const shared = new SharedRateLimit(loadScripts(redis), redisKeys(ctx.config.keyPrefix));
  return new AuthLimiter(shared, { failures: ctx.config.authFailuresPerMinute, perToken: ctx.config.rateLimitPerMinute }, ctx.clock, ctx.logger, answerMs);
}
