import { Queue, type JobsOptions } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';

/** The one BullMQ queue: a job names a run to advance. */
export const RUNS_QUEUE = 'runs';

export const runJobSchema = z.object({ runId: z.uuid() }).strict();
export type RunJob = z.infer<typeof runJobSchema>;

/** Deterministic per (run, step), so a step enqueued twice adds one job; libs/db next-job-step.ts derives it in SQL too. */
export function runJobId(runId: string, seq: number): string {
  return `run-${runId}-${seq}`;
}

const JOB_DEFAULTS: JobsOptions = {
  // The run lives in PostgreSQL; a failed job must vanish so the reconciler sees it missing and re-enqueues the run.
  removeOnComplete: true,
  removeOnFail: true,
  attempts: 1,
};

export class RunQueue {
  readonly queue: Queue<RunJob>;

  /** `redis` is the caller's to close. On a cluster `prefix` needs a hash tag (`{mtr}`): BullMQ's scripts touch several keys. */
  constructor(
    private readonly redis: Redis | Cluster,
    prefix: string,
  ) {
    this.queue = new Queue<RunJob>(RUNS_QUEUE, { connection: redis, prefix, defaultJobOptions: JOB_DEFAULTS });
  }

  async enqueue(runId: string, seq: number, delayMs = 0): Promise<string> {
    const jobId = runJobId(runId, seq);
    await this.queue.add('run', { runId }, { jobId, delay: Math.max(0, Math.ceil(delayMs)) });
    return jobId;
  }

  async enqueueMany(items: { runId: string; seq: number; delayMs: number }[]): Promise<void> {
    if (items.length === 0) return;
    await this.queue.addBulk(
      items.map((i) => ({ name: 'run', data: { runId: i.runId }, opts: { jobId: runJobId(i.runId, i.seq), delay: Math.max(0, Math.ceil(i.delayMs)) } })),
    );
  }

  /** Which job ids are still waiting, delayed or active: a finished job no longer carries its run. */
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

export class DirectoryQueue {
  readonly queue: Queue<DirectoryJob>;

  constructor(redis: Redis | Cluster, prefix: string) {
    this.queue = new Queue<DirectoryJob>(DIRECTORY_QUEUE, { connection: redis, prefix, defaultJobOptions: JOB_DEFAULTS });
  }

  async enqueue(accountId: string, delayMs = 0): Promise<void> {
    await this.queue.add('directory', { accountId }, { jobId: directoryJobId(accountId), delay: Math.max(0, Math.ceil(delayMs)) });
  }

  /** Asks again at `until` (the platform asked to slow down), under its own id: the asking job still runs under the account's. */
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
