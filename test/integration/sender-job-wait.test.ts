import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { jobWaitMs } from '../../services/sender/src/job-wait.js';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

// metronome_job_wait_seconds is a job's wait for a free slot: begun minus due. A delayed job
// (a continuation, a run created ahead of its time) is due at its add time plus its delay;
// BullMQ reads `job.delay` as 0 once it has promoted such a job, so the delay comes from its opts.

test('a delayed job that began on time waited about nothing, not its delay', async () => {
  const prefix = uniquePrefix('job-wait');
  const connection = () => new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue('wait', { connection: connection(), prefix });
  const waits: number[] = [];
  const worker = new Worker('wait', async (job) => void waits.push(jobWaitMs(job, Date.now())), { connection: connection(), prefix, concurrency: 4 });
  try {
    await queue.add('j', {}, { delay: 1_500 });
    await queue.add('j', {}, { delay: 600 });
    await queue.add('j', {}, {});
    const deadline = Date.now() + 10_000;
    while (waits.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(waits).toHaveLength(3);
    // BullMQ promotes a delayed job within some ms; 500 ms is far below the shortest delay
    for (const w of waits) {
      expect(w).toBeGreaterThanOrEqual(0);
      expect(w).toBeLessThan(500);
    }
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await Promise.all([worker.disconnect(), queue.disconnect()]);
  }
});
