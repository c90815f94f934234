import { randomUUID } from 'node:crypto';
import type { Logger } from '@metronome/observability';
import { answerWithin, redisKeys, type RedisClient } from '@metronome/redis';
import { LIMIT_ANSWER_MS } from '../rate-limiter.js';

export interface StreamSlot {
  release(): void;
}

// A slot is a sorted-set member scored with when it lapses: live streams push it on, a dead replica's lapse within TTL_MS.
const TTL_MS = 60_000;
const RENEW_MS = 20_000;

/**
 * SSE_MAX_PER_TOKEN across replicas: taking a slot adds it, then counts, and takes itself out over the limit, so racing requests
 * are refused together, never admitted together. Unlimited while Redis does not answer.
 */
export class StreamSlots {
  private warnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
    private readonly max: number,
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {}

  /** A slot for `caller` (`admin` or `tenant:{id}`: one token each), or null when all are held. */
  async take(caller: string): Promise<StreamSlot | null> {
    const key = redisKeys(this.keyPrefix).sseSlots(caller);
    const member = randomUUID();
    const now = this.now();
    try {
      const taking = this.redis
        .multi()
        .zremrangebyscore(key, '-inf', now)
        .zadd(key, now + TTL_MS, member)
        .zcard(key)
        .pexpire(key, TTL_MS)
        .exec();
      const results = await answerWithin(taking, LIMIT_ANSWER_MS, 'SSE stream limit');
      const held = Number(results?.[2]?.[1]);
      if (held > this.max) {
        await this.redis.zrem(key, member);
        return null;
      }
    } catch (err) {
      this.unavailable(err);
      return { release: () => undefined };
    }
    const renewal = setInterval(() => {
      const at = this.now();
      this.redis
        .multi()
        .zadd(key, 'XX', at + TTL_MS, member)
        .pexpire(key, TTL_MS)
        .exec()
        .catch((err: unknown) => this.unavailable(err));
    }, RENEW_MS);
    renewal.unref();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        clearInterval(renewal);
        this.redis.zrem(key, member).catch((err: unknown) => this.unavailable(err));
      },
    };
  }

  private unavailable(err: unknown): void {
    const now = this.now();
    if (now - this.warnedAt < 60_000) return;
    this.warnedAt = now;
    this.logger.warn({ err }, 'SSE stream limit unavailable (Redis does not answer): streams are not limited until it does');
  }
}
