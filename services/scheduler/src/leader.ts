import type { Clock } from '@metronome/core';
import type { ScheduleRepository } from '@metronome/db';
import type { LeaderLease } from '@metronome/redis';
import type { SchedulerEvents } from './scheduler-events.js';

/** Leadership: a Redis lease (who ticks) and a fencing token in PostgreSQL (what run creation checks). */
export class Leadership {
  private fence: number | null = null;

  constructor(
    private readonly lease: LeaderLease,
    private readonly repo: ScheduleRepository,
    private readonly holderId: string,
    private readonly ttlMs: number,
    private readonly clock: Clock,
    private readonly events: SchedulerEvents,
  ) {}

  /** Whether this replica led at its last check or renewal (the retention sweep runs only then). */
  get leading(): boolean {
    return this.fence !== null;
  }

  /** The fencing token when this replica leads now, else null. Call once per tick. */
  async check(): Promise<number | null> {
    const state = await this.lease.hold(this.ttlMs);
    if (state === 'lost') {
      if (this.fence !== null) this.events.emit('leader:lost', {});
      this.fence = null;
      return null;
    }
    if (state === 'taken' || this.fence === null) {
      this.fence = await this.repo.takeFence(this.holderId, new Date(this.clock.now()));
      this.events.emit('leader:gained', { fence: this.fence, holder: this.holderId });
    }
    return this.fence;
  }

  /** Keeps the lease alive between ticks (a timer calls it several times per lease); a lapsed lease ends leadership here. */
  async renew(): Promise<void> {
    if (this.fence === null) return;
    const state = await this.lease.hold(this.ttlMs);
    if (state !== 'held') {
      this.events.emit('leader:lapsed', { state });
      this.fence = null;
    }
  }

  /** Forget the token after the database refused it (another leader took over meanwhile). */
  demote(): void {
    this.fence = null;
  }

  async resign(): Promise<void> {
    this.fence = null;
    await this.lease.drop();
  }
}
