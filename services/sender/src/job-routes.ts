import { senderOfHolder } from '@metronome/redis';
import type { RunQueue } from '@metronome/queue';

/** How long an account let go to a named sender is that sender's to take. */
const HANDED_MS = 60_000;

/** Where a run's next job goes (issue 53): the own queue of the sender holding its account's connection, else the shared one. */
export class JobRoutes {
  private live = new Set<string>();
  private readonly handed = new Map<string, { to: string; at: number }>();

  constructor(
    private readonly o: {
      me: string;
      holders(accountIds: readonly string[]): Promise<(string | null)[]>;
      /** aborted on SIGTERM: nothing more is routed to this sender */
      draining: AbortSignal;
      now(): number;
    },
  ) {}

  seen(live: readonly string[]): void {
    this.live = new Set(live);
  }

  handedTo(accountId: string, sender: string): void {
    if (this.handed.size > 10_000) this.handed.clear();
    this.handed.set(accountId, { to: sender, at: this.o.now() });
  }

  /** The sender whose queue takes the account's next job; null: the shared queue. */
  async to(accountId: string): Promise<string | null> {
    if (this.live.size === 0) return null;
    const [holder] = await this.o.holders([accountId]);
    let sender = holder ? senderOfHolder(holder) : this.takerOf(accountId);
    // a holder gone from the registry still has the lease: the job waits here for it to end, then connects here
    if (sender && !this.live.has(sender)) sender = holder ? this.o.me : null;
    if (!sender || (sender === this.o.me && this.o.draining.aborted)) return null;
    return sender;
  }

  private takerOf(accountId: string): string | null {
    const h = this.handed.get(accountId);
    if (!h || this.o.now() - h.at > HANDED_MS) return null;
    return h.to;
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
