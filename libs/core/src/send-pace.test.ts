import { afterWrite, pacedPerMinute, PACE_MARGIN, writeWaitMs } from './send-pace.js';

test('slots are reserved a margin slower than the configured pace', () => {
  expect(pacedPerMinute(600)).toBeCloseTo(600 / (1 + PACE_MARGIN));
  expect(60_000 / pacedPerMinute(600)).toBeCloseTo(100 * (1 + PACE_MARGIN));
});

test('a late write pushes the next one: writes never bunch up behind it', () => {
  let pace = { tat: 0 };
  expect(writeWaitMs(pace, 1_000, 100, 1)).toBe(0);
  pace = afterWrite(pace, 1_000, 100); // on time
  expect(writeWaitMs(pace, 1_100, 100, 1)).toBe(0);
  pace = afterWrite(pace, 1_180, 100); // 80 ms late
  // the next slot was reserved for 1 200; written then, it would be 20 ms after the late one
  expect(writeWaitMs(pace, 1_200, 100, 1)).toBe(80);
  pace = afterWrite(pace, 1_280, 100);
  expect(pace.tat).toBe(1_380);
});

test('a burst lets that many writes go back to back, then the interval applies', () => {
  let pace = { tat: 0 };
  for (let i = 0; i < 3; i++) {
    expect(writeWaitMs(pace, 5_000, 100, 3)).toBe(0);
    pace = afterWrite(pace, 5_000, 100);
  }
  expect(writeWaitMs(pace, 5_000, 100, 3)).toBe(100);
});
