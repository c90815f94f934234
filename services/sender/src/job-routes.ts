import { senderOfHolder } from '@metronome/redis';
import type { RunQueue } from '@metronome/queue';

/**
 * Where a run's next job goes (issue 53): the own queue of the sender holding its account's connection, while that
 * sender is alive (the registry, as the account holder's last pass read it); else the shared queue, for any sender.
 * A job then runs where the socket is open, instead of landing on a replica that must send it on until it finds it.
 */
export class JobRoutes {
  private live = new Set<string>();

  constructor(
    private readonly o: {
      me: string;
      /** each account's connection lease holder (null: none) */
      holders(accountIds: readonly string[]): Promise<(string | null)[]>;
      /** aborted on SIGTERM: nothing more is routed to this sender */
      draining: AbortSignal;
    },
  ) {}

  /** The senders alive, as each pass of the account holder reads them. */
  seen(live: readonly string[]): void {
    this.live = new Set(live);
  }

  /** The sender whose queue takes the account's next job; null: the shared queue. */
  async to(accountId: string): Promise<string | null> {
    if (this.live.size === 0) return null;
    const [holder] = await this.o.holders([accountId]);
    const sender = holder ? senderOfHolder(holder) : null;
    if (!sender || !this.live.has(sender) || (sender === this.o.me && this.o.draining.aborted)) return null;
    return sender;
  }
}

/** Moves the jobs of every sender gone from the registry to the shared queue (any live sender does it on each pass). */
export async function sweepGoneSenders(
  queue: Pick<RunQueue, 'senders' | 'moveToShared'>,
  live: readonly string[],
  logger: { info(o: object, msg: string): void },
): Promise<void> {
  const alive = new Set(live);
  for (const sender of await queue.senders()) {
    if (alive.has(sender)) continue;
    const moved = await queue.moveToShared(sender);
    if (moved !== 'locked') logger.info({ sender, moved }, "a gone sender's jobs moved to the shared queue");
  }
}
