import { nextCronInstant } from './cron-clock.js';

// The DST rule, instant by instant (the scheduler's ticks across the same changes are in
// test/integration/scheduler-dst.test.ts).
function fires(expression: string, zone: string, from: string, count: number): string[] {
  const out: string[] = [];
  let at: Date | null = new Date(from);
  for (let i = 0; i < count && at; i++) {
    at = nextCronInstant(expression, zone, at);
    if (at) out.push(at.toISOString().slice(0, 16));
  }
  return out;
}

test('a repeated hour fires once, at its first instant, also when the search starts inside the repeat', () => {
  expect(fires('*/30 1 * * *', 'America/New_York', '2026-11-01T04:00:00Z', 3)).toEqual(['2026-11-01T05:00', '2026-11-01T05:30', '2026-11-02T06:00']);
  // 01:10 EST, the second pass: nothing more that day
  expect(fires('*/30 1 * * *', 'America/New_York', '2026-11-01T06:10:00Z', 1)).toEqual(['2026-11-02T06:00']);
});

test('times inside a gap fire once, at the first instant after it', () => {
  expect(fires('*/15 2 * * *', 'America/New_York', '2026-03-08T06:00:00Z', 2)).toEqual(['2026-03-08T07:00', '2026-03-09T06:00']);
  expect(fires('0,15 2,3 * * *', 'Europe/Berlin', '2026-03-29T00:00:00Z', 3)).toEqual(['2026-03-29T01:00', '2026-03-29T01:15', '2026-03-30T00:00']);
});

test('zones with no change, and UTC, fire as croner does', () => {
  expect(fires('0 9 * * 1-5', 'Asia/Kuala_Lumpur', '2026-01-01T02:00:00Z', 2)).toEqual(['2026-01-02T01:00', '2026-01-05T01:00']);
  expect(fires('*/5 * * * *', 'UTC', '2026-01-01T00:00:30Z', 2)).toEqual(['2026-01-01T00:05', '2026-01-01T00:10']);
});
