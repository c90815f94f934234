import { Queue, type JobsOptions, type JobType } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';

/** The shared BullMQ queue: a job names a run to advance. */
export const RUNS_QUEUE = 'runs';

export const runJobSchema = z.object({ runId: z.uuid() }).strict();
export type RunJob = z.infer<typeof runJobSchema>;

/** Deterministic per (run, step), so a step enqueued twice adds one job; libs/db next-job-step.ts derives it in SQL too. */
export function runJobId(runId: string, seq: number): string {
  return `run-${runId}-${seq}`;
}

/** A sender's own queue (issue 53): the jobs of the accounts whose connection it holds. BullMQ refuses `:` in a name. */
export function senderRunsQueue(senderId: string): string {
  return `${RUNS_QUEUE}@${senderId.replaceAll(':', '.')}`;
}

export const JOB_DEFAULTS: JobsOptions = {
  // The run lives in PostgreSQL; a failed job must vanish so the reconciler sees it missing and re-enqueues the run.
  removeOnComplete: true,
  removeOnFail: true,
  attempts: 1,
};

const HELD_STATES: JobType[] = ['active', 'wait', 'delayed', 'prioritized'];

export class RunQueue {
  readonly queue: Queue<RunJob>;
  private readonly senderQueues = new Map<string, Queue<RunJob>>();
  private readonly sendersKey: string;

  /** `redis` is the caller's to close. On a cluster `prefix` needs a hash tag (`{mtr}`): BullMQ's scripts touch several keys. */
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix: string,
  ) {
    this.queue = this.open(RUNS_QUEUE);
    this.sendersKey = `${prefix}:${RUNS_QUEUE}-senders`;
  }

  /** `to`: the sender whose own queue takes it (null: the shared queue, any sender). */
  async enqueue(runId: string, seq: number, delayMs = 0, to: string | null = null): Promise<string> {
    const jobId = runJobId(runId, seq);
    if (to !== null) await this.redis.sadd(this.sendersKey, to);
    await this.queueOf(to).add('run', { runId }, { jobId, delay: Math.max(0, Math.ceil(delayMs)) });
    return jobId;
  }

  async enqueueMany(items: { runId: string; seq: number; delayMs: number }[]): Promise<void> {
    if (items.length === 0) return;
    await this.queue.addBulk(
      items.map((i) => ({ name: 'run', data: { runId: i.runId }, opts: { jobId: runJobId(i.runId, i.seq), delay: Math.max(0, Math.ceil(i.delayMs)) } })),
    );
  }

  /** Which job ids wait or run in the shared queue or a sender's (a finished job no longer carries its run), each queue asked for those not found yet. */
  async existing(jobIds: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const q of [this.queue, ...(await this.senders()).map((s) => this.queueOf(s))]) {
      const left = jobIds.filter((id) => !found.has(id));
      if (left.length === 0) break;
      const pipeline = this.redis.pipeline();
      for (const id of left) pipeline.hmget(q.toKey(id), 'timestamp', 'finishedOn');
      const results = (await pipeline.exec()) ?? [];
      left.forEach((id, i) => {
        const [error, fields] = results[i] ?? [null, null];
        if (error) throw error;
        const [timestamp, finishedOn] = (fields as (string | null)[] | null) ?? [null, null];
        if (timestamp !== null && finishedOn === null) found.add(id);
      });
    }
    return found;
  }

  senders(): Promise<string[]> {
    return this.redis.smembers(this.sendersKey);
  }

  /**
   * Moves a sender's jobs to the shared queue (same ids, same due times) and drops its queue; unless `force`, not while a
   * job of it holds BullMQ's lock (it is alive). A job run twice is fenced by the account lock and the run's job id.
   */
  async moveToShared(senderId: string, force = false): Promise<number | 'locked'> {
    const from = this.queueOf(senderId);
    const jobs = (await from.getJobs(HELD_STATES)).filter((j) => j?.id);
    if (!force && jobs.length > 0) {
      const locks = await Promise.all(jobs.map((j) => this.redis.exists(`${from.toKey(j.id!)}:lock`)));
      if (locks.some((l) => l === 1)) return 'locked';
    }
    const now = Date.now();
    if (jobs.length > 0)
      await this.queue.addBulk(
        jobs.map((j) => ({ name: 'run', data: j.data, opts: { jobId: j.id!, delay: Math.max(0, j.timestamp + (j.delay ?? 0) - now) } })),
      );
    await from.obliterate({ force: true });
    await this.redis.srem(this.sendersKey, senderId);
    this.senderQueues.delete(senderId);
    await from.close();
    return jobs.length;
  }

  async counts(): Promise<{ waiting: number; delayed: number; active: number }> {
    const queues = [this.queue, ...(await this.senders()).map((s) => this.queueOf(s))];
    const all = await Promise.all(queues.map((q) => q.getJobCounts('waiting', 'delayed', 'active', 'prioritized')));
    const sum = (...states: string[]) => all.reduce((n, c) => n + states.reduce((m, s) => m + (c[s] ?? 0), 0), 0);
    return { waiting: sum('waiting', 'prioritized'), delayed: sum('delayed'), active: sum('active') };
  }

  async close(): Promise<void> {
    await Promise.all([this.queue, ...this.senderQueues.values()].map((q) => q.close()));
  }

  private queueOf(senderId: string | null): Queue<RunJob> {
    if (senderId === null) return this.queue;
    let q = this.senderQueues.get(senderId);
    if (!q) this.senderQueues.set(senderId, (q = this.open(senderRunsQueue(senderId))));
    return q;
  }

  private open(name: string): Queue<RunJob> {
    const q = new Queue<RunJob>(name, { connection: this.redis, prefix: this.prefix, defaultJobOptions: JOB_DEFAULTS });
    if (name !== RUNS_QUEUE) q.on('error', (error) => this.queue.emit('error', error));
    return q;
  }
}
