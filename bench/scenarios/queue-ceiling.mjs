import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

// The ceiling any BullMQ-based sender can reach on this machine: no-op jobs through one queue,
// added in bulk and consumed by one worker at concurrency 50, same Redis. Four passes in one
// process: V8 and BullMQ's code warm up over them (25,298 · 28,470 · 30,342 · 31,989 jobs/s in
// one try), and the last is the ceiling, as the throughput scenario's senders are measured
// warm too. The first (cold) pass is reported beside it.
const PASSES = 4;

export async function queueCeiling(env) {
  const n = env.quick ? 5_000 : 20_000;
  const passes = [];
  for (let i = 0; i < PASSES; i++) passes.push(await onePass(env, n));
  return {
    params: { jobs: n, concurrency: 50, passes: PASSES },
    figures: { 'no-op jobs/s': passes[PASSES - 1], 'no-op jobs/s, cold pass': passes[0] },
    passes,
  };
}

/** `n` no-op jobs through a queue of their own: jobs per second from the worker's start to its last job. */
async function onePass(env, n) {
  const prefix = `bench-ceiling-${randomBytes(4).toString('hex')}`;
  const producer = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  const consumer = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('noop', { connection: producer, prefix });
  let done = 0;
  let finish;
  const finished = new Promise((r) => (finish = r));
  const worker = new Worker('noop', async () => undefined, { connection: consumer, prefix, concurrency: 50, autorun: false });
  worker.on('completed', () => {
    if (++done === n) finish();
  });
  for (let i = 0; i < n; i += 1000) {
    await queue.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ name: 'noop', data: { i: i + k }, opts: { removeOnComplete: true } })));
  }
  const started = performance.now();
  void worker.run();
  await finished;
  const seconds = (performance.now() - started) / 1000;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  producer.disconnect();
  consumer.disconnect();
  return n / seconds;
}
