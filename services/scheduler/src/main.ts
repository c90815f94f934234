import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { OUTCOMES, SKIP_REASONS, systemClock } from '@metronome/core';
import { createDb, ErasureRepository, NotDeliveringRepository, RetentionRepository, ScheduleRepository, StaleFenceError } from '@metronome/db';
import {
  countDbStatements,
  countRedisCommands,
  createLogger,
  Metrics,
  postgresAnswers,
  readinessOf,
  settledWithin,
  startMetricsServer,
  stopStep,
  stopOnSignals,
} from '@metronome/observability';
import { RunQueue } from '@metronome/queue';
import { closeRedis, createRedis, duplicateRedis, LeaderLease, loadScripts, redisKeys, redisReadiness, SchedulerWake } from '@metronome/redis';
import { loadConfig } from './config.js';
import { redisErrorLog } from './redis-errors.js';
import { Leadership } from './leader.js';
import { reconcile } from './reconcile.js';
import { reportingEvents } from './reporting-events.js';
import { retentionSweep } from './retention-sweep.js';
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
const events = reportingEvents(metrics, logger);
const pool = createDb({ url: config.DATABASE_URL, max: 4, applicationName: 'metronome-scheduler', planEachCall: true });
const db = countDbStatements(pool, () => metrics.schedulerDbStatements.inc());
/** Runs are created this much further than one tick ahead, so a slow tick still queues a job before its `scheduledAt`. */
const TICK_MARGIN_MS = 1_000;
/** How long `/readyz` waits for PostgreSQL and Redis (a probe's own timeout is often 1–2 s). */
const READY_PROBE_MS = 1_000;
// Reconnect within half a tick, so the reconciler re-adds lost jobs within a tick of Redis answering again.
const reconnectMs = Math.max(50, Math.floor(config.SCHEDULER_TICK_MS / 2));
const redis = createRedis(config.REDIS, 'metronome-scheduler', { retryStrategy: (attempt) => Math.min(attempt * 50, reconnectMs) });
redis.on(
  'error',
  redisErrorLog(logger, () => clock.now()),
);
countRedisCommands(redis, () => metrics.schedulerRedisCommands.inc());
const keys = redisKeys(config.KEY_PREFIX);
const repo = new ScheduleRepository(db);
const notDelivering =
  config.NOT_DELIVERING_SENDS > 0
    ? {
        repo: new NotDeliveringRepository(db),
        settings: { sends: config.NOT_DELIVERING_SENDS, windowMs: config.NOT_DELIVERING_WINDOW, graceMs: config.NOT_DELIVERING_GRACE },
      }
    : null;
const queue = new RunQueue(redis, keys.queuePrefix);
// BullMQ re-emits the connection's errors, already logged above.
queue.queue.on('error', () => undefined);
const holderId = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
// The lease lasts one tick (at least 1 s), renewed three times per lease; a standby replaces a dead leader within two ticks.
const leaseMs = Math.max(1000, config.SCHEDULER_TICK_MS);
const leadership = new Leadership(new LeaderLease(loadScripts(redis), keys, holderId), repo, holderId, leaseMs, clock, events);

const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, undefined, undefined, () =>
  readinessOf({ postgres: postgresAnswers(db, READY_PROBE_MS), redis: () => redisReadiness(redis, keys.readiness, READY_PROBE_MS) }),
);

let stopping = false;
const renewal = setInterval(
  () => {
    leadership.renew().catch((error: unknown) => logger.warn({ err: error }, 'lease renewal failed'));
  },
  Math.floor(leaseMs / 3),
);
// Between ticks the leader blocks on the API's nudge (instant starts), on a connection of its own.
const wake = new SchedulerWake(keys.schedulerWake);
// Fails fast while Redis is away: a BLPOP queued behind a reconnect would stop the ticks.
const blocking = duplicateRedis(redis, { maxRetriesPerRequest: 0, enableOfflineQueue: false, autoResendUnfulfilledCommands: false });
blocking.on(
  'error',
  redisErrorLog(logger, () => clock.now()),
);

/** One tick; `full` ones also reconcile (a nudged tick only creates runs). Whether this replica leads. */
async function tickOnce(full: boolean): Promise<boolean> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  let fence: number | null;
  try {
    fence = await leadership.check();
  } catch (error) {
    logger.error({ err: error }, 'leadership check failed; retrying next tick');
    return false;
  }
  if (fence === null) return false;
  try {
    const result = await runTick(
      {
        repo,
        queue,
        clock,
        events,
        logger,
        metrics,
        batch: config.SCHEDULER_BATCH,
        jitterMs: config.SCHEDULER_JITTER_MS,
        lookaheadMs: config.SCHEDULER_TICK_MS + TICK_MARGIN_MS,
        noAccountAutopauseAfter: config.NO_ACCOUNT_AUTOPAUSE_AFTER,
      },
      fence,
    );
    if (result.created) logger.debug({ ...result, full }, 'tick');
  } catch (error) {
    if (error instanceof StaleFenceError) {
      leadership.demote();
      logger.warn('another scheduler took the lead during this tick: its runs were not created here');
      return false;
    }
    logger.error({ err: error }, 'tick failed; retrying next tick');
  }
  // apart from the tick: whatever stops it, lost jobs are still re-added and leases expired
  if (full) {
    try {
      await reconcile({ repo, queue, clock, events, logger, metrics, pausedRunTtlMs: config.PAUSED_RUN_TTL, ...(notDelivering && { notDelivering }) });
    } catch (error) {
      logger.error({ err: error }, 'reconcile failed; retrying next tick');
    }
  }
  const used = process.cpuUsage(cpu);
  events.emit('tick:timed', { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1e3 });
  return true;
}

let sleeping: { timer: NodeJS.Timeout; done: () => void } | null = null;
function sleep(ms: number): Promise<void> {
  return new Promise((done) => {
    sleeping = { timer: setTimeout(done, Math.max(0, ms)), done };
  });
}

let nudgesFailing = false;
async function pause(leading: boolean, untilMs: number): Promise<void> {
  const ms = untilMs - clock.now();
  // standbys, and the leader while its blocking connection reconnects, wait on the timer
  if (!leading || blocking.status !== 'ready') return sleep(ms);
  let guard: NodeJS.Timeout | undefined;
  try {
    // bounded however the connection behaves: the regular tick never waits on Redis
    const late = new Promise<false>((done) => (guard = setTimeout(() => done(false), ms + 1000)));
    if (await Promise.race([wake.wait(blocking, ms), late])) events.emit('tick:woken', {});
    nudgesFailing = false;
  } catch (error) {
    if (stopping) return;
    if (!nudgesFailing) logger.warn({ err: error }, 'waiting for a scheduler nudge failed; ticking on the timer until Redis answers');
    nudgesFailing = true;
    await sleep(untilMs - clock.now());
  } finally {
    clearTimeout(guard);
  }
}

const loop = (async () => {
  let nextFullAt = 0;
  while (!stopping) {
    const full = clock.now() >= nextFullAt;
    if (full) nextFullAt = clock.now() + config.SCHEDULER_TICK_MS;
    const leading = await tickOnce(full);
    if (!stopping) await pause(leading, nextFullAt);
  }
})();

// The retention sweep on the leader, beside the ticks, one pass every RETENTION_SWEEP_MS; each statement commits alone.
for (const kind of ['targets', 'events', 'runs', 'webhook_deliveries', 'media', 'tenant_rows']) metrics.retentionDeleted.inc({ kind }, 0);
const retention = new RetentionRepository(db);
const erasure = new ErasureRepository(db);
let sweepTimer: NodeJS.Timeout | null = null;
let sweepWake: (() => void) | null = null;
const sweeping = (async () => {
  while (!stopping) {
    if (leadership.leading) {
      try {
        const deleted = await retentionSweep({
          retention,
          erasure,
          clock,
          policy: { historyMs: config.HISTORY_RETENTION, summaryMs: config.RUN_SUMMARY_RETENTION },
          batch: config.RETENTION_BATCH,
          pauseMs: config.RETENTION_PAUSE_MS,
          keepGoing: () => !stopping && leadership.leading,
          counted: (kind, rows) => metrics.retentionDeleted.inc({ kind }, rows),
        });
        metrics.retentionSweeps.inc({ result: 'ok' });
        if (deleted > 0) logger.info({ deleted }, 'retention sweep');
      } catch (error) {
        metrics.retentionSweeps.inc({ result: 'error' });
        logger.error({ err: error }, 'retention sweep failed; retrying next sweep');
      }
    }
    if (stopping) break;
    await new Promise<void>((done) => {
      sweepWake = done;
      sweepTimer = setTimeout(done, config.RETENTION_SWEEP_MS);
    });
  }
})();

/** How long the current tick gets to finish on stop; cut short, it loses nothing the next leader will not redo. */
const TICK_STOP_MS = 4_000;
const STEP_MS = 1_000;

stopOnSignals(
  'scheduler',
  logger,
  'stopping: finishing the current tick',
  async () => {
    stopping = true;
    const s = sleeping as { timer: NodeJS.Timeout; done: () => void } | null;
    if (s) {
      clearTimeout(s.timer);
      s.done();
    }
    if (sweepTimer) clearTimeout(sweepTimer);
    (sweepWake as (() => void) | null)?.();
    blocking.disconnect(); // ends a BLPOP in progress
    clearInterval(renewal);
    if (!(await settledWithin(loop, TICK_STOP_MS))) {
      logger.warn({ waitedMs: TICK_STOP_MS, redis: redis.status }, 'tick still running: closing the connection under it');
      await closeRedis(redis, Math.min(reconnectMs + 500, 2_500));
      await stopStep(logger, 'tick', loop, STEP_MS);
    }
    await stopStep(logger, 'retention sweep', sweeping, STEP_MS);
    if (redis.status === 'ready') await stopStep(logger, 'resign', leadership.resign(), STEP_MS);
    await stopStep(logger, 'queue and metrics', Promise.allSettled([queue.close(), metricsServer.close()]), STEP_MS);
    await stopStep(logger, 'connections', Promise.allSettled([pool.destroy(), closeRedis(redis)]), STEP_MS);
    logger.info('scheduler stopped');
  },
  process,
  config.STOP_DEADLINE_MS,
);
// Ready only once SIGTERM is handled.
logger.info({ metricsPort: metricsServer.port, tickMs: config.SCHEDULER_TICK_MS, batch: config.SCHEDULER_BATCH, holder: holderId }, 'scheduler ready');
