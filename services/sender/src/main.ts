import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker, type Job } from 'bullmq';
import { DEVELOPMENT_SECRETS_KEY, open, OUTCOMES, COOLING_REASONS, COOLING_RESTRICTED, NEW_CHAT_HOLD_CODES, systemClock, type Outcome } from '@metronome/core';
import {
  AccountRepository,
  accountProxies,
  ChatDirectoryRepository,
  createDb,
  HeldAccountRepository,
  LateRefusalRepository,
  OptOutRepository,
  ReceiptRepository,
  WhatsAppSentMessageRepository,
} from '@metronome/db';
import {
  countDbStatements,
  countRedisCommands,
  createLogger,
  routeConsoleToLog,
  Metrics,
  postgresAnswers,
  readinessOf,
  settledWithin,
  startMetricsServer,
  stopStep,
  stopOnSignals,
} from '@metronome/observability';
import { DirectoryQueue, RUNS_QUEUE, runJobSchema, senderRunsQueue } from '@metronome/queue';
import { closeRedis, ConnectRate, createRedis, loadScripts, redisKeys, redisReadiness, SenderRegistry, TELEGRAM_USER_HOLDER_SUFFIX } from '@metronome/redis';
import { CONNECT_BURST, HttpTransport, realTimers, TelegramTransport } from '@metronome/transports';
import { letIdleGo, startAccountHolder } from './account-holder.js';
import { JobRoutes, sweepGoneSenders } from './job-routes.js';
import { WorkerPool } from './worker-pool.js';
import { SLOTS_PER_WORKER } from './worker-slots.js';
import { drainMs, loadConfig } from './config.js';
import { buildSenderDeps, senderSettings } from './build-deps.js';
import { directoryWorker } from './directory-job.js';
import { lateRefusalRecorder } from './late-refusals.js';
import { OptOutListener } from './opt-outs.js';
import { ReceiptWriter } from './receipt-writer.js';
import { reportingEvents } from './reporting-events.js';
import { startResendCleanup } from './resend-cleanup.js';
import { jobWaitMs } from './job-wait.js';
import { processRunJob } from './run-job.js';
import { telegramUserOnFirstUse, whatsappOnFirstUse } from './platform-transports.js';

// Composition root: build every dependency once, run the worker, drain on SIGTERM.

/** Chat directory syncs one replica runs at once. */
const DIRECTORY_CONCURRENCY = 2;
const config = (() => {
  try {
    return loadConfig(process.env);
  } catch (error) {
    console.error(`sender: ${(error as Error).message}`);
    process.exit(2);
  }
})();
const logger = createLogger('sender', config.LOG_LEVEL);
// libsignal prints Signal sessions, private keys included, to the console
routeConsoleToLog(logger);
const metrics = new Metrics('sender');
metrics.initOutcomes(OUTCOMES);
// every (platform, reason) from 0, so a rate() sees the first cooling
for (const platform of ['http', 'telegram', 'telegram_user', 'whatsapp'])
  for (const reason of [...COOLING_REASONS, COOLING_RESTRICTED]) metrics.accountCooling.inc({ platform, reason }, 0);
for (const reason of NEW_CHAT_HOLD_CODES) metrics.newChatsHeld.inc({ reason }, 0);
if (!config.SECRETS_KEY) logger.warn('SECRETS_KEY unset: using the development key (NODE_ENV=development only)');

const db = countDbStatements(createDb({ url: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE, applicationName: 'metronome-sender' }), () =>
  metrics.dbQueries.inc(),
);
const redis = createRedis(config.REDIS, 'metronome-sender');
const workerRedis = createRedis(config.REDIS, 'metronome-sender-worker');
countRedisCommands(redis, () => metrics.redisCommands.inc({ connection: 'app' }));
countRedisCommands(workerRedis, () => metrics.redisCommands.inc({ connection: 'worker' }));
const keys = redisKeys(config.KEY_PREFIX);
const scripts = loadScripts(redis);
const http = new HttpTransport({ baseUrl: config.HTTP_TRANSPORT_URL, timeoutMs: config.SEND_TIMEOUT_MS });
const telegram = new TelegramTransport({ baseUrl: config.TELEGRAM_API_URL, timeoutMs: config.SEND_TIMEOUT_MS });

// the current key seals and opens; the previous one only opens (key rotation)
const secretsKeys = [config.SECRETS_KEY ?? DEVELOPMENT_SECRETS_KEY, ...(config.SECRETS_KEY_PREVIOUS ? [config.SECRETS_KEY_PREVIOUS] : [])];
// Replies on the WhatsApp sockets this replica holds: a keyword lists the chat (opt-out).
const optOuts = new OptOutListener({ repo: new OptOutRepository(db), clock: systemClock, logger, metrics });
// Each account's chat directory (CONTRACT §3): synced on request, and kept current by WhatsApp's group events.
const chatDirectory = new ChatDirectoryRepository(db);
// WhatsApp: one socket per account across replicas (Redis lease), auth state sealed in PostgreSQL, sent messages kept there for WHATSAPP_RESEND_DAYS so any
// replica answers a re-send request.
const sentMessages = new WhatsAppSentMessageRepository(db);
const resendKeepMs = config.WHATSAPP_RESEND_DAYS * 86_400_000;
const resendCleanup = startResendCleanup({ repo: sentMessages, clock: systemClock, logger, keepMs: resendKeepMs });
// Delivery and read receipts, queued by the sockets and written in batches off the send path.
const receipts = new ReceiptWriter({
  repo: new ReceiptRepository(db),
  metrics,
  logger: logger.child({ component: 'whatsapp' }),
  replyWindowMs: config.REPLY_WINDOW,
});
// Accounts' proxies: read when a connection opens, and where each stands told to the account.
const proxies = accountProxies(new AccountRepository(db), secretsKeys, () => new Date());
const senderId = `sender:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
const connectRate = new ConnectRate(scripts, keys, config.ACCOUNT_CONNECTS_PER_SECOND, CONNECT_BURST);
const wa = whatsappOnFirstUse({
  holderId: senderId,
  connectRate,
  proxies,
  config,
  db,
  scripts,
  keys,
  secretsKeys,
  logger,
  metrics,
  directory: chatDirectory,
  sentMessages,
  resendKeepMs,
  // a reply: opt-out keywords as before, and the run it answers counts it
  onIncomingText: (accountId, message) => (optOuts.onIncomingText(accountId, message), receipts.onReply(accountId, message)),
  // A message refused after the write: its target moves (a 463's hold on new chats is the pool's).
  onMessageRefused: (refusal) => recordLateRefusal(refusal),
  onReceipt: receipts.onReceipt,
});
// Telegram user accounts: one MTProto connection per account across replicas (the same Redis lease).
const tg = telegramUserOnFirstUse({
  holderId: `${senderId}${TELEGRAM_USER_HOLDER_SUFFIX}`,
  config,
  db,
  scripts,
  keys,
  proxies,
  // a person's private text: an opt-out and a reply, as WhatsApp's
  onIncomingText: (accountId, message) => (optOuts.onIncomingText(accountId, message, 'telegram_user'), receipts.onReply(accountId, message, 'telegram_user')),
});
const [whatsapp, telegramUser] = [wa.transport, tg.transport];
// Aborted on SIGTERM: running jobs stop claiming, finish and write what they send, give back what they hold and hand their runs on at once.
const drain = new AbortController();
// every running job listens (job-pace.ts wakeOnDrain): hundreds at once are expected, not a leak
setMaxListeners(0, drain.signal);
const registry = new SenderRegistry(redis, keys);
const routes = new JobRoutes({ me: senderId, holders: (ids) => registry.leaseHolders(ids), draining: drain.signal, now: () => systemClock.now() });
// Every active WhatsApp and telegram_user account connected on some sender, between runs too (replies, receipts, opt-outs).
const holder = config.ALWAYS_CONNECTED
  ? startAccountHolder({
      me: senderId,
      accounts: new HeldAccountRepository(db),
      registry,
      connectRate,
      connections: [wa.connections, tg.connections],
      open: (row) => ({
        id: row.id,
        externalId: row.externalId,
        credentials: row.credentials ? (JSON.parse(open(row.credentials, secretsKeys).toString('utf8')) as Record<string, unknown>) : null,
        proxy: row.proxy ? open(row.proxy, secretsKeys).toString('utf8') : null,
      }),
      clock: systemClock,
      logger: logger.child({ component: 'account-holder' }),
      random: Math.random,
      sleep: (ms, signal) => sleep(ms, undefined, { signal }).catch(() => undefined),
      everyMs: config.ACCOUNT_HOLD_EVERY_MS,
      connectsPerSecond: config.ACCOUNT_CONNECTS_PER_SECOND,
      heldNow: (held) => growSlots(held),
      seen: (live) => (routes.seen(live), sweepGoneSenders(queue, live, logger)),
      handedTo: (accountId, sender) => routes.handedTo(accountId, sender),
    })
  : null;

// What jobs report goes through one bus: its subscribers make the metrics and the log lines.
const events = reportingEvents(metrics, logger);
const recordLateRefusal = lateRefusalRecorder({
  refusals: new LateRefusalRepository(db),
  clock: systemClock,
  timers: realTimers,
  events,
});
const deps = buildSenderDeps({
  db,
  redis,
  scripts,
  keys,
  transports: { http, telegram, telegram_user: telegramUser, whatsapp },
  secretsKeys,
  clock: systemClock,
  events,
  logger,
  metrics,
  settings: senderSettings(config),
  random: Math.random,
  sleep: (ms) => sleep(ms),
  draining: drain.signal,
  ...(holder && { routes }),
});
const { queue } = deps;
queue.queue.on('error', (error) => logger.warn({ err: error }, 'queue error'));

/** One job: parse it, process its run, report how it went (the events bus makes metrics and logs). */
async function runJob(job: Job): Promise<Outcome> {
  const started = Date.now();
  // how long the job sat due in the queue: the sign that the replicas' slots are all busy
  events.emit('job:start', { jobId: job.id, waitMs: jobWaitMs(job, started) });
  let outcome: Outcome;
  const parsed = runJobSchema.safeParse(job.data);
  if (!parsed.success || !job.id) {
    events.emit('job:invalid', { jobId: job.id, data: job.data });
    outcome = 'failed';
  } else {
    try {
      outcome = await processRunJob(deps, { jobId: job.id, runId: parsed.data.runId });
    } catch (error) {
      // The run's truth is in PostgreSQL: a failed job loses nothing. The reconciler gives the run a new job once this one is gone.
      events.emit('job:error', { jobId: job.id, runId: parsed.data.runId, error });
      outcome = 'failed';
    }
  }
  events.emit('job:outcome', { jobId: job.id, runId: parsed.success ? parsed.data.runId : undefined, outcome, heldMs: Date.now() - started });
  return outcome;
}

// SENDER_CONCURRENCY slots, in workers of at most 32 (worker-slots.ts), one more per account held; its own queue: 32 and one per account held.
const workerOn = (queueName: string) => (slots: number) => {
  const worker = new Worker(queueName, runJob, {
    connection: workerRedis,
    prefix: keys.queuePrefix,
    concurrency: slots,
    // A killed replica's jobs come back after lockDuration + stalledInterval (SENDER_HOLD_MS, 15 s; BullMQ's own 60 s): a lock is lost only to an event loop blocked that long.
    lockDuration: Math.round((config.SENDER_HOLD_MS * 2) / 3),
    stalledInterval: Math.round(config.SENDER_HOLD_MS / 3),
    // Picked up again however often its sender dies (the job id, account lock and target leases fence a stale holder): BullMQ's default fails it
    // after one stall, leaving its run stuck `running`, since the reconciler counts a failed job as present.
    maxStalledCount: 1_000_000,
  });
  worker.on('error', (error) => logger.error({ err: error }, 'worker error'));
  return worker;
};
const workerPool = new WorkerPool(config.SENDER_CONCURRENCY, workerOn(RUNS_QUEUE));
const ownPool = holder ? new WorkerPool(SLOTS_PER_WORKER, workerOn(senderRunsQueue(senderId))) : null;
function growSlots(held: number): void {
  const before = workerPool.size;
  workerPool.hold(held);
  ownPool?.hold(held);
  if (workerPool.size > before) logger.info({ slots: workerPool.size, held }, 'job slots grown for the accounts held');
}
// Chat directory syncs (CONTRACT §3): rare and long (a listing of thousands of chats), so a few at once.
const directoryQueue = new DirectoryQueue(redis, keys.queuePrefix);
directoryQueue.queue.on('error', (error) => logger.warn({ err: error }, 'directory queue error'));
const directory = directoryWorker(
  {
    directory: chatDirectory,
    transports: { http, telegram, telegram_user: telegramUser, whatsapp },
    secretsKeys,
    clock: systemClock,
    events,
    draining: drain.signal,
    retryAt: (accountId, until) => directoryQueue.retryAt(accountId, until, systemClock.now()),
  },
  logger,
  workerRedis,
  keys.queuePrefix,
  DIRECTORY_CONCURRENCY,
);

/** How long `/readyz` waits for PostgreSQL and Redis (a readiness probe's own timeout is often 1–2 s). */
const READY_PROBE_MS = 1_000;
const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, undefined, undefined, () =>
  readinessOf({ postgres: postgresAnswers(db, READY_PROBE_MS), redis: () => redisReadiness(redis, keys.readiness, READY_PROBE_MS) }),
);

const DRAIN_MS = drainMs(config.STOP_DEADLINE_MS);
/** How long they get to write the answers a closed connection gave their sends still waiting: at least this, and while Redis answers what the deadline leaves past CLOSE_RESERVE_MS. */
const ANSWERS_MS = 1_500;
const CLOSE_RESERVE_MS = 1_500;
/** Enough for a connection whose Redis is away to make its last attempt (ioredis waits up to 2 s between them). */
const REDIS_CLOSE_MS = 2_500;
/** Each later step of the stop, bounded the same way. */
const STEP_MS = 1_000;

let platformsClosed: Promise<unknown> | undefined;
const closePlatforms = () =>
  (platformsClosed ??= Promise.allSettled([
    stopStep(logger, 'whatsapp', wa.close(), STEP_MS),
    stopStep(logger, 'telegram_user', tg.close(), STEP_MS),
    stopStep(logger, 'http and telegram', Promise.allSettled([http.close(), telegram.close()]), STEP_MS),
  ]));

stopOnSignals(
  'sender',
  logger,
  'draining: finishing in-flight sends, handing runs on',
  async () => {
    const stopAt = Date.now();
    drain.abort();
    resendCleanup.stop();
    // out of the registry first: the others take this sender's accounts as its sockets close below
    await stopStep(logger, 'account holder', holder?.stop() ?? Promise.resolve(), STEP_MS);
    // idle sockets go now: the others open them while the jobs here finish what they send (the rest close after the drain)
    await stopStep(logger, 'idle sockets', letIdleGo([wa.connections, tg.connections]), STEP_MS);
    const workers = () => [...workerPool.workers, ...(ownPool?.workers ?? []), directory];
    const closing = Promise.all(workers().map((w) => w.close()));
    if (!(await settledWithin(closing, DRAIN_MS))) {
      // Answers before connections: closed sockets answer the waiting sends at once, written while PostgreSQL and Redis are there.
      logger.warn({ waitedMs: DRAIN_MS }, 'sends still waiting: closing the platform connections under them');
      await closePlatforms();
      // slow, not stuck: a job closed under (Redis away) leaves its run to BullMQ's stall check and its account to its lock's expiry
      const answersMs = redis.status === 'ready' ? Math.max(ANSWERS_MS, config.STOP_DEADLINE_MS - CLOSE_RESERVE_MS - (Date.now() - stopAt)) : ANSWERS_MS;
      if (!(await settledWithin(closing, answersMs))) {
        // Answers are written to PostgreSQL as they come (JobWrites in writes.ts); what the stuck jobs still hold is covered by its leases (CONTRACT §4).
        logger.warn({ redis: redis.status, worker: workerRedis.status }, 'jobs still running: closing the connections under them');
        await Promise.all([closeRedis(redis, REDIS_CLOSE_MS), closeRedis(workerRedis, REDIS_CLOSE_MS)]);
        await stopStep(logger, 'workers', Promise.all(workers().map((w) => w.close(true))), STEP_MS);
      }
    }
    if (ownPool) await stopStep(logger, 'own queue', queue.moveToShared(senderId, true), STEP_MS);
    // Sockets close and release their leases while Redis and PostgreSQL are still there.
    await closePlatforms();
    await stopStep(logger, 'receipts', receipts.close(), STEP_MS);
    await stopStep(logger, 'queue and servers', Promise.allSettled([queue.close(), directoryQueue.close(), metricsServer.close()]), STEP_MS);
    await stopStep(logger, 'connections', Promise.allSettled([db.destroy(), closeRedis(redis), closeRedis(workerRedis)]), STEP_MS);
    logger.info('sender stopped');
  },
  process,
  config.STOP_DEADLINE_MS,
);
// Ready only once SIGTERM is handled: a signal right after this line must drain, not kill.
logger.info({ metricsPort: metricsServer.port, concurrency: config.SENDER_CONCURRENCY, transport: config.HTTP_TRANSPORT_URL }, 'sender ready');
