import { SLOTS_PER_WORKER, workerSlots } from './worker-slots.js';

/**
 * Job slots: SENDER_CONCURRENCY plus one per account held, as a sending account's job keeps its slot between paced sends.
 * Added in whole workers and never taken back: an idle slot costs nothing, and a smaller worker would wait for its jobs.
 */
export class WorkerPool<W> {
  readonly workers: W[];
  private heldSlots = 0;

  constructor(
    private readonly base: number,
    private readonly make: (slots: number) => W,
  ) {
    this.workers = workerSlots(base).map(make);
  }

  get size(): number {
    return this.base + this.heldSlots;
  }

  hold(held: number): void {
    while (this.heldSlots < held) {
      this.workers.push(this.make(SLOTS_PER_WORKER));
      this.heldSlots += SLOTS_PER_WORKER;
    }
  }
}
