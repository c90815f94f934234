import { isValidTimezone, localTimeToInstant, placeInWindow, windowAt, windowProblem, formatLocalTime } from './delivery-window.js';

const iso = (d: Date) => d.toISOString();

describe('windowAt', () => {
  // [case, at (UTC), window, zone, expected start, expected end]
  const cases: [string, string, string, string, string, string, string][] = [
    ['inside a plain window', '2026-03-08T03:00:00Z', '06:00', '18:00', 'Asia/Kuala_Lumpur', '2026-03-07T22:00:00.000Z', '2026-03-08T10:00:00.000Z'],
    ['after close: next day', '2026-03-08T12:00:00Z', '06:00', '18:00', 'Asia/Kuala_Lumpur', '2026-03-08T22:00:00.000Z', '2026-03-09T10:00:00.000Z'],
    ['before open: same day', '2026-03-08T21:00:00Z', '06:00', '18:00', 'Asia/Kuala_Lumpur', '2026-03-08T22:00:00.000Z', '2026-03-09T10:00:00.000Z'],
    ['exactly at close is outside', '2026-03-08T10:00:00Z', '06:00', '18:00', 'Asia/Kuala_Lumpur', '2026-03-08T22:00:00.000Z', '2026-03-09T10:00:00.000Z'],
    ['exactly at open is inside', '2026-03-07T22:00:00Z', '06:00', '18:00', 'Asia/Kuala_Lumpur', '2026-03-07T22:00:00.000Z', '2026-03-08T10:00:00.000Z'],
    ['crossing midnight, after midnight', '2026-06-10T02:00:00Z', '22:00', '06:00', 'UTC', '2026-06-09T22:00:00.000Z', '2026-06-10T06:00:00.000Z'],
    ['crossing midnight, before midnight', '2026-06-10T23:00:00Z', '22:00', '06:00', 'UTC', '2026-06-10T22:00:00.000Z', '2026-06-11T06:00:00.000Z'],
    ['crossing midnight, in the gap', '2026-06-10T12:00:00Z', '22:00', '06:00', 'UTC', '2026-06-10T22:00:00.000Z', '2026-06-11T06:00:00.000Z'],
    ['end 24:00', '2026-06-10T23:59:00Z', '08:00', '24:00', 'UTC', '2026-06-10T08:00:00.000Z', '2026-06-11T00:00:00.000Z'],
    // America/New_York springs forward 2026-03-08 02:00 EST → 03:00 EDT: 02:30 does not exist.
    [
      'DST gap: nonexistent start opens when the gap ends',
      '2026-03-08T05:00:00Z',
      '02:30',
      '04:00',
      'America/New_York',
      '2026-03-08T07:00:00.000Z',
      '2026-03-08T08:00:00.000Z',
    ],
    // ... and falls back 2026-11-01 02:00 EDT → 01:00 EST: 01:30 happens twice; the first counts.
    [
      'DST overlap: repeated start opens at its first occurrence',
      '2026-11-01T04:00:00Z',
      '01:30',
      '03:00',
      'America/New_York',
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T08:00:00.000Z',
    ],
    [
      'DST overlap: window over the repeated hour is 1 h longer',
      '2026-11-01T04:30:00Z',
      '00:30',
      '02:30',
      'America/New_York',
      '2026-11-01T04:30:00.000Z',
      '2026-11-01T07:30:00.000Z',
    ],
    [
      'DST crossing midnight window over the spring change',
      '2026-03-08T04:00:00Z',
      '22:00',
      '06:00',
      'America/New_York',
      '2026-03-08T03:00:00.000Z',
      '2026-03-08T10:00:00.000Z',
    ],
  ];
  test.each(cases)('%s', (_name, at, start, end, zone, expStart, expEnd) => {
    const span = windowAt(new Date(at), { start, end }, zone);
    expect(iso(span.start)).toBe(expStart);
    expect(iso(span.end)).toBe(expEnd);
  });
});

describe('localTimeToInstant', () => {
  test('resolves a nonexistent time to the end of the gap, not gap-length later', () => {
    expect(new Date(localTimeToInstant({ year: 2026, month: 3, day: 29 }, 2 * 60 + 30, 'Europe/Berlin')).toISOString()).toBe('2026-03-29T01:00:00.000Z');
  });
  test('24:00 is the next midnight', () => {
    expect(new Date(localTimeToInstant({ year: 2026, month: 1, day: 31 }, 1440, 'UTC')).toISOString()).toBe('2026-02-01T00:00:00.000Z');
  });
});

describe('placeInWindow', () => {
  test('inside: starts when due, ends at the close', () => {
    const p = placeInWindow(new Date('2026-01-05T10:00:00Z'), { start: '09:00', end: '17:00' }, 'UTC');
    expect(iso(p.startAt)).toBe('2026-01-05T10:00:00.000Z');
    expect(iso(p.windowEndAt!)).toBe('2026-01-05T17:00:00.000Z');
  });
  test('outside: never early, starts at the next opening', () => {
    const p = placeInWindow(new Date('2026-01-05T18:00:00Z'), { start: '09:00', end: '17:00' }, 'UTC');
    expect(iso(p.startAt)).toBe('2026-01-06T09:00:00.000Z');
  });
  test('the always-open window has no end', () => {
    expect(placeInWindow(new Date('2026-01-05T18:00:00Z'), { start: '00:00', end: '24:00' }, 'UTC').windowEndAt).toBeNull();
  });
});

describe('validation', () => {
  test.each([
    [{ start: '06:00', end: '18:00' }, null],
    [{ start: '22:00', end: '06:00' }, null],
    [{ start: '00:00', end: '24:00' }, null],
    [{ start: '06:00', end: '06:00' }, 'start and end must differ'],
    [{ start: '24:00', end: '06:00' }, 'start must be HH:MM from 00:00 to 23:59'],
    [{ start: '6:00', end: '18:00' }, 'start must be HH:MM from 00:00 to 23:59'],
    [{ start: '06:00', end: '24:01' }, 'end must be HH:MM from 00:00 to 24:00'],
  ])('%j → %s', (window, problem) => {
    expect(windowProblem(window)).toBe(problem);
  });
  test('timezones', () => {
    expect(isValidTimezone('Asia/Kuala_Lumpur')).toBe(true);
    expect(isValidTimezone('Mars/Olympus')).toBe(false);
    expect(isValidTimezone('')).toBe(false);
  });
  test('formatLocalTime', () => {
    expect(formatLocalTime(new Date('2026-03-08T10:00:00Z'), 'Asia/Kuala_Lumpur')).toBe('18:00');
  });
});

describe('placeInWindow across midnight and DST (never early)', () => {
  // [case, due (UTC), window, zone, expected start, expected window end]
  const cases: [string, string, string, string, string, string, string][] = [
    [
      'midnight-crossing: due just before midnight runs at once',
      '2026-06-10T23:59:59Z',
      '22:00',
      '02:00',
      'UTC',
      '2026-06-10T23:59:59.000Z',
      '2026-06-11T02:00:00.000Z',
    ],
    [
      'midnight-crossing: due just after midnight runs at once',
      '2026-06-11T00:00:01Z',
      '22:00',
      '02:00',
      'UTC',
      '2026-06-11T00:00:01.000Z',
      '2026-06-11T02:00:00.000Z',
    ],
    [
      'midnight-crossing: due at the close waits for the evening',
      '2026-06-11T02:00:00Z',
      '22:00',
      '02:00',
      'UTC',
      '2026-06-11T22:00:00.000Z',
      '2026-06-12T02:00:00.000Z',
    ],
    // Europe/Berlin springs forward 2026-03-29 02:00 CET → 03:00 CEST: 02:30 does not exist.
    [
      'spring gap: a 02:30 start opens at 03:00 local (01:00 UTC)',
      '2026-03-29T00:10:00Z',
      '02:30',
      '05:00',
      'Europe/Berlin',
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T03:00:00.000Z',
    ],
    [
      'spring gap: the next day opens at 02:30 again',
      '2026-03-29T04:00:00Z',
      '02:30',
      '05:00',
      'Europe/Berlin',
      '2026-03-30T00:30:00.000Z',
      '2026-03-30T03:00:00.000Z',
    ],
    // ... and falls back 2026-10-25 03:00 CEST → 02:00 CET: 02:30 happens twice; the first counts.
    [
      'fall overlap: a 02:30 start opens at its first occurrence',
      '2026-10-24T23:00:00Z',
      '02:30',
      '04:00',
      'Europe/Berlin',
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T03:00:00.000Z',
    ],
    [
      'fall overlap: due in the second 02:30 is inside',
      '2026-10-25T01:30:00Z',
      '02:30',
      '04:00',
      'Europe/Berlin',
      '2026-10-25T01:30:00.000Z',
      '2026-10-25T03:00:00.000Z',
    ],
    [
      'midnight-crossing window over the fall change closes an hour later in UTC',
      '2026-10-24T21:00:00Z',
      '22:00',
      '06:00',
      'Europe/Berlin',
      '2026-10-24T21:00:00.000Z',
      '2026-10-25T05:00:00.000Z',
    ],
    [
      'Lord Howe (30-minute DST shift) window start in the gap',
      '2026-10-03T15:10:00Z',
      '02:15',
      '03:00',
      'Australia/Lord_Howe',
      '2026-10-03T15:30:00.000Z',
      '2026-10-03T16:00:00.000Z',
    ],
  ];
  test.each(cases)('%s', (_name, due, start, end, zone, expStart, expEnd) => {
    const placed = placeInWindow(new Date(due), { start, end }, zone);
    expect(iso(placed.startAt)).toBe(expStart);
    expect(placed.windowEndAt && iso(placed.windowEndAt)).toBe(expEnd);
    expect(placed.startAt.getTime()).toBeGreaterThanOrEqual(Date.parse(due));
  });
});
