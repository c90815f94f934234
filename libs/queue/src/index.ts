import { Queue, type JobsOptions } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';

/** The one BullMQ queue: a job names a run to advance. */
export const RUNS_QUEUE = 'runs';

export const runJobSchema = z.object({ runId: z.uuid() }).strict();
export type RunJob = z.infer<typeof runJobSchema>;

/**
 * A run's job id for its `seq`-th job (0: first, then one per continuation). Deterministic, so
 * enqueueing the same step twice (scheduler retry, reconciler) adds one job, not two. A run's
 * hand-over derives the same string in SQL (libs/db next-job-step.ts; run-hand-over.test.ts).
 */
export function runJobId(runId: string, seq: number): string {
  return `run-${runId}-${seq}`;
}

const JOB_DEFAULTS: JobsOptions = {
  // The run's state is in PostgreSQL; a finished job has nothing worth keeping in Redis.
  removeOnComplete: true,
  // A failed job carries no run: the reconciler must see it as missing and re-enqueue the run.
  removeOnFail: true,
  attempts: 1,
};

/** Producer side of the runs queue. */
export class RunQueue {
  readonly queue: Queue<RunJob>;

  /**
   * `redis` (one server or a cluster) is shared with the caller, who closes it. On a cluster
   * `prefix` must carry a hash tag (`{mtr}`): BullMQ's scripts touch several keys of a queue.
   */
  constructor(
    private readonly redis: Redis | Cluster,
    prefix: string,
  ) {
    this.queue = new Queue<RunJob>(RUNS_QUEUE, { connection: redis, prefix, defaultJobOptions: JOB_DEFAULTS });
  }

  /** Adds the job for step `seq` of a run, to start after `delayMs`. Idempotent per (run, seq). */
  async enqueue(runId: string, seq: number, delayMs = 0): Promise<string> {
    const jobId = runJobId(runId, seq);
    await this.queue.add('run', { runId }, { jobId, delay: Math.max(0, Math.ceil(delayMs)) });
    return jobId;
  }

  /** Adds many first jobs in one round trip. */
  async enqueueMany(items: { runId: string; seq: number; delayMs: number }[]): Promise<void> {
    if (items.length === 0) return;
    await this.queue.addBulk(
      items.map((i) => ({ name: 'run', data: { runId: i.runId }, opts: { jobId: runJobId(i.runId, i.seq), delay: Math.max(0, Math.ceil(i.delayMs)) } })),
    );
  }

  /**
   * Which of these job ids are still live in Redis: waiting, delayed or active. A job that
   * finished (completed or failed, `finishedOn` set) no longer carries its run, even if its
   * hash is still there. One command per id, pipelined: every job hash has a `timestamp`.
   */
  async existing(jobIds: string[]): Promise<Set<string>> {
    if (jobIds.length === 0) return new Set();
    const pipeline = this.redis.pipeline();
    for (const id of jobIds) pipeline.hmget(this.queue.toKey(id), 'timestamp', 'finishedOn');
    const results = (await pipeline.exec()) ?? [];
    return new Set(
      jobIds.filter((_, i) => {
        const [error, fields] = results[i] ?? [null, null];
        const [timestamp, finishedOn] = (fields as (string | null)[] | null) ?? [null, null];
        if (error) throw error;
        return timestamp !== null && finishedOn === null;
      }),
    );
  }

  async counts(): Promise<{ waiting: number; delayed: number; active: number }> {
    const c = await this.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    return { waiting: (c['waiting'] ?? 0) + (c['prioritized'] ?? 0), delayed: c['delayed'] ?? 0, active: c['active'] ?? 0 };
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

/** The chat directory's queue: a job lists one account's chats (CONTRACT §3, "Chat directory"). */
export const DIRECTORY_QUEUE = 'directory';

export const directoryJobSchema = z.object({ accountId: z.uuid() }).strict();
export type DirectoryJob = z.infer<typeof directoryJobSchema>;

/** One job id per account: a sync asked for while one waits or runs adds nothing. */
export function directoryJobId(accountId: string): string {
  return `directory-${accountId}`;
}

/** Producer side of the directory queue (the senders run its jobs). */
export class DirectoryQueue {
  readonly queue: Queue<DirectoryJob>;

  /** `redis` is shared with the caller, who closes it; `prefix` as RunQueue's. */
  constructor(redis: Redis | Cluster, prefix: string) {
    this.queue = new Queue<DirectoryJob>(DIRECTORY_QUEUE, { connection: redis, prefix, defaultJobOptions: JOB_DEFAULTS });
  }

  /** Asks for a sync of the account's directory, after `delayMs`; deduplicated per account. */
  async enqueue(accountId: string, delayMs = 0): Promise<void> {
    await this.queue.add('directory', { accountId }, { jobId: directoryJobId(accountId), delay: Math.max(0, Math.ceil(delayMs)) });
  }

  /**
   * Asks for the sync again at `until` (the platform asked to slow down). Its own job id, since
   * the job that asks is still running under the account's.
   */
  async retryAt(accountId: string, until: Date, now: number): Promise<void> {
    await this.queue.add(
      'directory',
      { accountId },
      { jobId: `${directoryJobId(accountId)}-at-${until.getTime()}`, delay: Math.max(0, until.getTime() - now) },
    );
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
