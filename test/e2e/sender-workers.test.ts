import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RUNS_QUEUE } from '@metronome/queue';
import { stackForFile } from '../helpers/stack.js';
import { eventually, REDIS_URL } from '../helpers/test-env.js';

// A sender splits SENDER_CONCURRENCY between BullMQ workers of at most 32 slots, so that its
// jobs are fetched side by side (services/sender/src/worker-slots.ts says why). Seen from Redis:
// each worker holds a blocking connection of its own, named for the queue, which BullMQ's
// `getWorkers` lists. 70 slots are three workers (24, 23, 23).

const stack = stackForFile({ senders: 1, senderEnv: { SENDER_CONCURRENCY: '70' } });

test('a sender of 70 slots fetches with three workers', async () => {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(RUNS_QUEUE, { connection, prefix: stack.keyPrefix });
  try {
    const workers = await eventually(
      'the sender to start its workers',
      async () => {
        const listed = await queue.getWorkers();
        return listed.length >= 3 ? listed : null;
      },
      10_000,
      50,
    );
    expect(workers).toHaveLength(3);
    expect(stack.senders[0]!.output.some((l) => l.includes('"concurrency":70'))).toBe(true);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}, 30_000);
