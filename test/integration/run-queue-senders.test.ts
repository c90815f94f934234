import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { RunQueue, runJobId, senderRunsQueue } from '@metronome/queue';
import { createRedis, redisKeys } from '@metronome/redis';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

// A sender's own queue (issue 53) on real Redis and BullMQ: the reconciler sees its jobs, a sweep moves a gone
// sender's jobs to the shared queue under their ids and due times, and leaves a sender whose job is still locked.

let redis: Redis;
let prefix: string;
let queue: RunQueue;
beforeEach(() => {
  redis = createRedis(REDIS_URL, 'test-run-queue-senders');
  prefix = redisKeys(uniquePrefix('senders')).queuePrefix;
  queue = new RunQueue(redis, prefix);
});
afterEach(async () => {
  await queue.queue.obliterate({ force: true });
  await queue.close();
  await redis.quit();
});

test("a job routed to a sender waits in that sender's queue, and the reconciler and the gauges see it there", async () => {
  const run = randomUUID();
  await queue.enqueue(run, 1, 60_000, 'sender:host:1:ab');
  expect(await queue.senders()).toEqual(['sender:host:1:ab']);
  expect(await redis.zcard(`${prefix}:${senderRunsQueue('sender:host:1:ab')}:delayed`)).toBe(1);
  expect(await redis.zcard(`${prefix}:runs:delayed`)).toBe(0);
  const shared = randomUUID();
  await queue.enqueue(shared, 4, 60_000);
  expect(await queue.existing([runJobId(run, 1), runJobId(run, 2), runJobId(shared, 4)])).toEqual(new Set([runJobId(run, 1), runJobId(shared, 4)]));
  expect(await queue.counts()).toEqual({ waiting: 0, delayed: 2, active: 0 });
  await queue.moveToShared('sender:host:1:ab', true);
});

test("a gone sender's jobs move to the shared queue under their ids and due times, and its queue is dropped", async () => {
  const [a, b] = [randomUUID(), randomUUID()];
  const before = Date.now();
  await queue.enqueue(a, 3, 0, 'sender:gone');
  await queue.enqueue(b, 7, 45_000, 'sender:gone');
  expect(await queue.moveToShared('sender:gone')).toBe(2);
  const waiting = await queue.queue.getJobs(['wait']);
  expect(waiting.map((j) => j.id)).toEqual([runJobId(a, 3)]);
  const [delayed] = await queue.queue.getJobs(['delayed']);
  expect(delayed!.id).toBe(runJobId(b, 7));
  expect(delayed!.data).toEqual({ runId: b });
  // due when it was: 45 s after it was first added, give or take the test's own time
  const due = delayed!.timestamp + delayed!.delay;
  expect(due).toBeGreaterThanOrEqual(before + 45_000 - 50);
  expect(due).toBeLessThanOrEqual(Date.now() + 45_000);
  expect(await queue.senders()).toEqual([]);
  expect(await redis.keys(`${prefix}:${senderRunsQueue('sender:gone')}:*`)).toEqual([]);
  expect(await queue.existing([runJobId(a, 3), runJobId(b, 7)])).toEqual(new Set([runJobId(a, 3), runJobId(b, 7)]));
});

test('a sender whose job still holds its BullMQ lock is alive: a sweep leaves its queue, the sender itself moves it when stopping', async () => {
  const run = randomUUID();
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const connection = createRedis(REDIS_URL, 'test-run-queue-worker');
  const worker = new Worker(senderRunsQueue('sender:slow'), () => (started(), new Promise(() => undefined)), {
    connection,
    prefix,
    lockDuration: 30_000,
  });
  try {
    await queue.enqueue(run, 1, 0, 'sender:slow');
    await running;
    expect(await queue.moveToShared('sender:slow')).toBe('locked');
    expect(await queue.senders()).toEqual(['sender:slow']);
    expect(await queue.moveToShared('sender:slow', true)).toBe(1);
    expect((await queue.queue.getJobs(['wait'])).map((j) => j.id)).toEqual([runJobId(run, 1)]);
  } finally {
    await worker.close(true);
    await connection.quit();
  }
});
