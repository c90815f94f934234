import { BEAT_MS, LoopWatch } from './loop-watch.js';

const beats = (n: number) => new Promise((r) => setTimeout(r, n * BEAT_MS));

function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the event loop is held, as by a long garbage collection
  }
}

test('the slack is the whole time since the last beat once the loop missed one, until two beats come on time; 0 within a beat', () => {
  let t = 1_000;
  const watch = new LoopWatch(() => t);
  watch.stop();
  watch.beat();
  t += BEAT_MS;
  expect(watch.slackMs()).toBe(0);
  // held 160 ms after the beat: a request stamped now may have come right after it
  t += 150;
  expect(watch.slackMs()).toBe(160);
  // the overdue beat ends the hold, but a request read after it may have come during it too
  watch.beat();
  t += 3;
  expect(watch.slackMs()).toBe(163);
  // until two beats come on time
  t += BEAT_MS - 3;
  watch.beat();
  expect(watch.slackMs()).toBe(170);
  t += BEAT_MS;
  watch.beat();
  t += 3;
  expect(watch.slackMs()).toBe(0);
});

test('a hold of under two beats is not carried past the beat that ends it', () => {
  let t = 1_000;
  const watch = new LoopWatch(() => t);
  watch.stop();
  t += 2 * BEAT_MS;
  expect(watch.slackMs()).toBe(2 * BEAT_MS);
  watch.beat();
  t += 3;
  expect(watch.slackMs()).toBe(0);
});

test('on the real clock, a request read a pass after the hold, past the overdue beat, carries the whole hold', async () => {
  const watch = new LoopWatch();
  try {
    await beats(3);
    holdLoop(150);
    // the first pass after the hold (its poll accepts a connection that came meanwhile), the overdue beat, then the
    // pass that reads that connection's request
    const slack = await new Promise<number>((resolve) => setImmediate(() => setImmediate(() => resolve(watch.slackMs()))));
    expect(slack).toBeGreaterThanOrEqual(150);
  } finally {
    watch.stop();
  }
});

test('on the real clock, a stamp taken after the loop was held up carries the whole hold', async () => {
  const watch = new LoopWatch();
  try {
    await beats(3);
    holdLoop(150);
    // the last beat came before the hold began: a request stamped now may have come then
    expect(watch.slackMs()).toBeGreaterThanOrEqual(150);
    // once the loop beats on time again the slack is gone
    for (let i = 0; i < 100 && watch.slackMs() >= 150; i++) await beats(1);
    expect(watch.slackMs()).toBeLessThan(150);
  } finally {
    watch.stop();
  }
});
