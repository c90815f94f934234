import { ChatDirectoryRepository, type DB, type DirectorySyncRow } from '@metronome/db';
import { DirectoryQueue } from '@metronome/queue';
import { redisKeys, type RedisClient } from '@metronome/redis';
import type { Kysely } from 'kysely';

/** Records the sync `syncing`, then queues its job (one per account); the queue is opened on first use. */
export class DirectorySyncs {
  readonly directory: ChatDirectoryRepository;
  private queue: DirectoryQueue | null = null;

  constructor(
    db: Kysely<DB>,
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    this.directory = new ChatDirectoryRepository(db);
  }

  async request(accountId: string, now: Date): Promise<DirectorySyncRow> {
    const state = await this.directory.requestSync(accountId, now);
    try {
      await this.queueOf().enqueue(accountId);
    } catch (error) {
      await this.directory.syncState(accountId, { status: 'failed', reason: 'the sync could not be queued; ask again' }, now).catch(() => undefined);
      throw error;
    }
    return state;
  }

  async close(): Promise<void> {
    await this.queue?.close();
  }

  private queueOf(): DirectoryQueue {
    if (!this.queue) {
      this.queue = new DirectoryQueue(this.redis, redisKeys(this.keyPrefix).queuePrefix);
      // the shared connection's errors are logged where it is made
      this.queue.queue.on('error', () => undefined);
    }
    return this.queue;
  }
}
