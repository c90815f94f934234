import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { ManualClock } from '@metronome/core';
import { ScheduleRepository, type DB } from '@metronome/db';
import { createLogger, Metrics } from '@metronome/observability';
import { RunQueue } from '@metronome/queue';
import { createRedis, redisKeys } from '@metronome/redis';
import type { TickDeps } from '../../services/scheduler/src/tick.js';
import { createTestDatabase, REDIS_URL, uniquePrefix, type TestDatabase } from './test-env.js';

/**
 * The scheduler's tick on real PostgreSQL (a fresh database) and real Redis (a fresh queue
 * prefix) with a manual clock, no jitter and no lookahead: what every scheduler integration test
 * starts from. `close()` empties the queue and closes everything it opened.
 */
export interface SchedulerTestbed {
  tdb: TestDatabase;
  db: Kysely<DB>;
  redis: Redis;
  queue: RunQueue;
  clock: ManualClock;
  metrics: Metrics;
  repo: ScheduleRepository;
  deps: TickDeps;
  close(): Promise<void>;
}

export async function schedulerTestbed(label: string, start: number): Promise<SchedulerTestbed> {
  const tdb = await createTestDatabase(label);
  const redis = createRedis(REDIS_URL, `test-${label}`);
  const queue = new RunQueue(redis, redisKeys(uniquePrefix(label)).queuePrefix);
  const clock = new ManualClock(start);
  const metrics = new Metrics('test');
  const repo = new ScheduleRepository(tdb.db);
  return {
    tdb,
    db: tdb.db,
    redis,
    queue,
    clock,
    metrics,
    repo,
    deps: { repo, queue, clock, logger: createLogger('test', 'silent'), metrics, batch: 500, jitterMs: 0, lookaheadMs: 0 },
    close: async () => {
      await queue.queue.obliterate({ force: true });
      await queue.close();
      await redis.quit();
      await tdb.drop();
    },
  };
}
