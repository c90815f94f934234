// Builds the sandbox platform as a Fastify app without listening (main.ts listens; tests inject).
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify';
import type { SandboxConfig } from './config.js';
import { ApiKeys } from './api-keys.js';
import { controlRoutes } from './control-routes.js';
import { renderPage } from './page.js';
import { platformRoutes } from './platform-routes.js';
import { SandboxReceipts } from './receipts.js';
import { LoopWatch } from './loop-watch.js';
import { createSleeper } from './sleeper.js';
import { SandboxState } from './state.js';

export interface SandboxOptions {
  config: Pick<SandboxConfig, 'limits' | 'seed' | 'directorySize'>;
  /** Milliseconds since the epoch; tests pass a fake clock. */
  clock?: () => number;
  logger?: FastifyBaseLogger;
  /** Waits for latency and hangs; tests pass one that records instead of waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** where receipts are posted from the start (SANDBOX_RECEIPTS_URL); PUT /sandbox/receipts changes it */
  receiptsUrl?: string | null;
}

export async function buildSandbox(opts: SandboxOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    // One line per send would drown the demo and the benchmarks; failures are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    // Account and chat ids travel in the path; the default 100-character cap would 404 long ones.
    routerOptions: { maxParamLength: 1_000 },
  });
  const state = new SandboxState(opts.config.limits, opts.config.seed);
  if (opts.config.directorySize !== undefined) state.directories.reset(opts.config.seed, opts.config.directorySize);
  const keys = new ApiKeys();
  const receipts = new SandboxReceipts();
  if (opts.receiptsUrl) receipts.update({ url: opts.receiptsUrl });
  app.addHook('onClose', async () => receipts.close());
  const clock = opts.clock ?? Date.now;
  const sleeper = createSleeper();
  const sleep = opts.sleep ?? sleeper.sleep;
  // A hung request would otherwise hold app.close() (and SIGTERM) for its whole hang.
  app.addHook('preClose', async () => sleeper.wakeAll());

  // JSON as usual, but an empty body is "no body": `POST /sandbox/reset` with a JSON header must work.
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') done(null, undefined);
    else json(req, text, done);
  });

  app.setErrorHandler<FastifyError>((err, req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 500) {
      req.log.error({ err }, 'sandbox error');
      return reply.code(500).send({ error: 'internal_error' });
    }
    // Malformed platform requests are what a real platform answers message_invalid to (permanent for the sender).
    if (req.url.startsWith('/v1/')) {
      const account = (req.params as { account?: string } | undefined)?.account;
      if (account !== undefined) state.rejectInvalid({ account }, err.message, clock());
      return reply.code(400).send({ error: 'message_invalid', detail: err.message });
    }
    return reply.code(status).send({ error: 'invalid_request', detail: err.message });
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ error: 'not_found' }));

  // Stamps are only as late as the loop on the real clock; a fake clock's are exact.
  const watch = opts.clock ? null : new LoopWatch();
  if (watch) app.addHook('onClose', async () => watch.stop());
  const stampSlackMs = () => watch?.slackMs() ?? 0;
  await app.register(platformRoutes, { state, keys, clock, stampSlackMs, sleep, receipts });
  await app.register(controlRoutes, { state, keys, receipts });
  app.get('/healthz', async () => ({ ok: true }));
  app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(renderPage(state)));
  return app;
}
