import { performance } from 'node:perf_hooks';

export const BEAT_MS = 10;

/**
 * How late a stamp may be: a held-up event loop stamps the requests that came meanwhile at once, later than they came.
 * A connection that came during a hold is accepted after it and read a pass later, past a beat or two: so while one of
 * the last two beats came over two beats late, the slack runs from the beat before them; else it is the time since the
 * last beat when over a beat, else 0. Real clock only.
 */
export class LoopWatch {
  private readonly beats: [number, number, number];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly now: () => number = () => performance.now()) {
    const at = now();
    this.beats = [at, at, at];
    this.timer = setInterval(() => this.beat(), BEAT_MS);
    this.timer.unref();
  }

  beat(): void {
    this.beats.pop();
    this.beats.unshift(this.now());
  }

  /** How long since the beat before a hold (or the last beat), whole ms, when the loop was held up; else 0. */
  slackMs(): number {
    const [last, before, earliest] = this.beats;
    const now = this.now();
    if (last - before > 2 * BEAT_MS || before - earliest > 2 * BEAT_MS) return Math.ceil(now - earliest);
    return now - last > BEAT_MS ? Math.ceil(now - last) : 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
