import { performance } from 'node:perf_hooks';

export const BEAT_MS = 10;

/**
 * How late a stamp may be: a held-up event loop stamps the requests that came meanwhile at once, later than they came.
 * `slackMs()` is the time since the last beat when over a beat, else 0. Real clock only.
 */
export class LoopWatch {
  private lastBeat: number;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.lastBeat = now();
    this.timer = setInterval(() => this.beat(), BEAT_MS);
    this.timer.unref();
  }

  beat(): void {
    this.lastBeat = this.now();
  }

  /** How long since the last beat, whole ms, when that is longer than a beat (the loop was held up); else 0. */
  slackMs(): number {
    const sinceBeat = this.now() - this.lastBeat;
    return sinceBeat > BEAT_MS ? Math.ceil(sinceBeat) : 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
