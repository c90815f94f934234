import { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import { JOB_DEFAULTS } from './run-queue.js';

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
