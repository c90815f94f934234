// Composition root: config, connections, the app, listen, and a clean stop on SIGTERM/SIGINT.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ConfigError } from '@metronome/config';
import { systemClock } from '@metronome/core';
import { createDb, redactUrl, WebhookDeliveryRepository } from '@metronome/db';
import { createLogger, listeningAt, routeConsoleToLog, stopOnSignals, stopStep } from '@metronome/observability';
import { RunQueue } from '@metronome/queue';
import { closeRedis, createRedis, redisKeys } from '@metronome/redis';
import { buildApp } from './app.js';
import { DEFAULT_WEBHOOK_CONFIG, loadConfig, type ApiConfig } from './config.js';
import { telegramSignInOnFirstUse, whatsappOnFirstUse } from './platform-clients.js';
import { whatsappLogout } from './routes/erasure.js';
import { createWebhookDeliverer } from './webhooks/webhook-deliverer.js';

async function main(): Promise<void> {
  let config: ApiConfig;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`control-api: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger('control-api', config.logLevel);
  // libsignal prints Signal sessions, private keys included, to the console
  routeConsoleToLog(logger);
  if (config.developmentSecretsKey) logger.warn('SECRETS_KEY is unset: using the development key; never do this with real credentials');
  if (config.adminToken === null) logger.warn('ADMIN_TOKEN is unset: no request can act as the operator');

  const db = createDb({ url: config.databaseUrl, max: 10, applicationName: 'metronome-api' });
  const redis = createRedis(config.redisCluster ?? config.redisUrl, 'metronome-api');
  redis.on('error', (err) => logger.warn({ err }, 'redis error'));
  const queue = new RunQueue(redis, redisKeys(config.keyPrefix).queuePrefix);
  // BullMQ re-emits connection errors (console.error when nobody listens); the redis listener already logs them.
  queue.queue.on('error', () => undefined);
  const whatsapp = whatsappOnFirstUse(config, db, redis, logger);
  const app = await buildApp({
    config,
    db,
    redis,
    queue,
    clock: systemClock,
    logger,
    whatsappPairing: whatsapp.pairing,
    telegramSignIn: telegramSignInOnFirstUse(config),
    accountLogout: whatsappLogout(whatsapp.sockets),
  });

  await app.listen({ host: config.host, port: config.port });
  // Every replica delivers the webhook outbox; the outbox's claims keep them apart.
  const webhooks = createWebhookDeliverer({
    repo: new WebhookDeliveryRepository(db),
    clock: systemClock,
    logger: logger.child({ component: 'webhooks' }),
    config: config.webhooks ?? DEFAULT_WEBHOOK_CONFIG,
    secretsKeys: [config.secretsKey, ...(config.secretsKeyPrevious ? [config.secretsKeyPrevious] : [])],
    owner: `api:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
  });
  webhooks.start();
  stopOnSignals(
    'control-api',
    logger,
    'control-api stopping',
    async () => {
      // Each step bounded: one waiting on a dependency that does not answer is left behind.
      await stopStep(logger, 'requests', app.close(), 5_000);
      await stopStep(logger, 'webhooks', webhooks.stop(), 1_000);
      await stopStep(logger, 'whatsapp', whatsapp.close(), 1_000);
      await stopStep(logger, 'queue', queue.close(), 1_000);
      await stopStep(logger, 'connections', Promise.allSettled([closeRedis(redis), db.destroy()]), 1_000);
      logger.info('control-api stopped');
    },
    process,
    config.stopDeadlineMs,
  );
  // Listening is announced once SIGTERM is handled: a signal right after it must drain, not kill.
  const { url } = listeningAt(app.server.address(), config.host, config.port);
  logger.info({ url, docs: `${url}/docs`, database: redactUrl(config.databaseUrl) }, 'control-api listening');
}

main().catch((err: unknown) => {
  process.stderr.write(`control-api: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
