import { BEAT_MS, LoopWatch } from './loop-watch.js';

const beats = (n: number) => new Promise((r) => setTimeout(r, n * BEAT_MS));

function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the event loop is held, as by a long garbage collection
  }
}

test('the slack is the whole time since the last beat once the loop missed one, and 0 within a beat', () => {
  let t = 1_000;
  const watch = new LoopWatch(() => t);
  watch.stop();
  watch.beat();
  t += BEAT_MS;
  expect(watch.slackMs()).toBe(0);
  // held 160 ms after the beat: a request stamped now may have come right after it
  t += 150;
  expect(watch.slackMs()).toBe(160);
  watch.beat();
  t += 3;
  expect(watch.slackMs()).toBe(0);
});

test('on the real clock, a stamp taken after the loop was held up carries the whole hold', async () => {
  const watch = new LoopWatch();
  try {
    await beats(3);
    holdLoop(150);
    // the last beat came before the hold began: a request stamped now may have come then
    expect(watch.slackMs()).toBeGreaterThanOrEqual(150);
    // once the loop runs again the beat catches up and the slack is gone
    await beats(3);
    expect(watch.slackMs()).toBeLessThan(150);
  } finally {
    watch.stop();
  }
});
