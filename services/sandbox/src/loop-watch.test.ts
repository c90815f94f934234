import { BEAT_MS, LoopWatch } from './loop-watch.js';

const beats = (n: number) => new Promise((r) => setTimeout(r, n * BEAT_MS));

function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the event loop is held, as by a long garbage collection
  }
}

test('a stamp taken after the loop was held up carries the hold, less one beat', async () => {
  const watch = new LoopWatch();
  try {
    await beats(3);
    holdLoop(150);
    // the last beat came at most one beat before the hold began
    expect(watch.slackMs()).toBeGreaterThanOrEqual(150 - BEAT_MS);
    // once the loop runs again the beat catches up and the slack is gone
    await beats(3);
    expect(watch.slackMs()).toBeLessThan(150 - BEAT_MS);
  } finally {
    watch.stop();
  }
});
