import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { OUTCOMES, SKIP_REASONS, systemClock } from '@metronome/core';
import { createDb, ScheduleRepository, StaleFenceError } from '@metronome/db';
import { createLogger, Metrics, startMetricsServer } from '@metronome/observability';
import { RunQueue } from '@metronome/queue';
import { createRedis, LeaderLease, loadScripts, redisKeys } from '@metronome/redis';
import { loadConfig } from './config.js';
import { countDbStatements, countRedisCommands } from './instrument.js';
import { redisErrorLog } from './redis-errors.js';
import { Leadership } from './leader.js';
import { reconcile } from './reconcile.js';
import { runTick } from './tick.js';

// Composition root: build once, tick while leading, stand by otherwise, resign on SIGTERM.
const config = (() => {
  try {
    return loadConfig(process.env);
  } catch (error) {
    console.error(`scheduler: ${(error as Error).message}`);
    process.exit(2);
  }
})();
const logger = createLogger('scheduler', config.LOG_LEVEL);
const metrics = new Metrics('scheduler');
metrics.initOutcomes(OUTCOMES);
// every reason exported from the start, so a rate over it has a series before the first skip
for (const reason of SKIP_REASONS) metrics.occurrencesSkipped.inc({ reason }, 0);
const clock = systemClock;
const pool = createDb({ url: config.DATABASE_URL, max: 4, applicationName: 'metronome-scheduler' });
const db = countDbStatements(pool, () => metrics.schedulerDbStatements.inc());
// Reconnect within half a tick of Redis coming back (ioredis waits up to 2 s between attempts
// by default), so the reconciler re-adds lost jobs within one tick of it answering again.
const reconnectMs = Math.max(50, Math.floor(config.SCHEDULER_TICK_MS / 2));
const redis = createRedis(config.REDIS, 'metronome-scheduler', { retryStrategy: (attempt) => Math.min(attempt * 50, reconnectMs) });
redis.on('error', redisErrorLog(logger, () => clock.now()));
countRedisCommands(redis, () => metrics.schedulerRedisCommands.inc());
const keys = redisKeys(config.KEY_PREFIX);
const repo = new ScheduleRepository(db);
const queue = new RunQueue(redis, keys.queuePrefix);
// BullMQ re-emits the connection's errors, and prints them as multi-line text when nobody
// listens; the listener on the connection above logs each one already, as JSON.
queue.queue.on('error', () => undefined);
const holderId = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
// The lease lasts one tick (at least a second, for very short ticks) and is renewed three times
// per lease by its own timer, whatever a tick's length. A standby tries to take it every tick,
// so a dead leader is replaced within two ticks: the lease running out, then the next check.
const leaseMs = Math.max(1000, config.SCHEDULER_TICK_MS);
const leadership = new Leadership(new LeaderLease(loadScripts(redis), keys, holderId), repo, holderId, leaseMs, clock, logger);

const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT);

let stopping = false;
let timer: NodeJS.Timeout | undefined;
const renewal = setInterval(() => {
  leadership.renew().catch((error: unknown) => logger.warn({ err: error }, 'lease renewal failed'));
}, Math.floor(leaseMs / 3));
let current: Promise<void> = Promise.resolve();

async function tickOnce(): Promise<void> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  let fence: number | null;
  try {
    fence = await leadership.check();
  } catch (error) {
    logger.error({ err: error }, 'leadership check failed; retrying next tick');
    return;
  }
  if (fence === null) return;
  try {
    const result = await runTick(
      {
        repo,
        queue,
        clock,
        logger,
        metrics,
        batch: config.SCHEDULER_BATCH,
        jitterMs: config.SCHEDULER_JITTER_MS,
        lookaheadMs: config.SCHEDULER_TICK_MS,
        noAccountAutopauseAfter: config.NO_ACCOUNT_AUTOPAUSE_AFTER,
      },
      fence,
    );
    if (result.created) logger.debug(result, 'tick');
  } catch (error) {
    if (error instanceof StaleFenceError) {
      leadership.demote();
      logger.warn('another scheduler took the lead during this tick: its runs were not created here');
      return;
    }
    logger.error({ err: error }, 'tick failed; retrying next tick');
  }
  // Apart from the tick: whatever stops the tick, lost jobs are still re-added and leases expired.
  try {
    await reconcile({ repo, queue, clock, logger, metrics, pausedRunTtlMs: config.PAUSED_RUN_TTL });
  } catch (error) {
    logger.error({ err: error }, 'reconcile failed; retrying next tick');
  }
  metrics.schedulerTickSeconds.observe((performance.now() - started) / 1000);
  const used = process.cpuUsage(cpu);
  metrics.schedulerTickCpuSeconds.observe((used.user + used.system) / 1e6);
}

function schedule(): void {
  if (stopping) return;
  timer = setTimeout(() => {
    current = tickOnce().finally(schedule);
  }, config.SCHEDULER_TICK_MS);
}
current = tickOnce().finally(schedule);

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  clearTimeout(timer);
  clearInterval(renewal);
  logger.info({ signal }, 'stopping: finishing the current tick');
  await current;
  await leadership.resign().catch(() => undefined);
  await Promise.allSettled([queue.close(), metricsServer.close()]);
  await Promise.allSettled([pool.destroy(), redis.quit()]);
  logger.info('scheduler stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
// Ready only once SIGTERM is handled: a signal right after this line must drain, not kill.
logger.info({ metricsPort: metricsServer.port, tickMs: config.SCHEDULER_TICK_MS, batch: config.SCHEDULER_BATCH, holder: holderId }, 'scheduler ready');
