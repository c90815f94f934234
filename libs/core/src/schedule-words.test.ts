import { Cron } from 'croner';
import { cronInWords, scheduleInWords } from './schedule-words.js';
import type { Schedule } from './schedule.js';

// A campaign's schedule in words, table by table. Each cron row's words are checked against
// what croner (the scheduler's cron) really fires at, where the words name times.

const KL = 'Asia/Kuala_Lumpur';
const OPEN = { start: '00:00', end: '24:00' };
const DAY = { start: '06:00', end: '18:00' };

test.each<[string, Schedule, { start: string; end: string }, string, string]>([
  ['interval in minutes', { type: 'interval', everySeconds: 300 }, DAY, KL, 'every 5 minutes, 06:00–18:00 Asia/Kuala_Lumpur'],
  ['one minute', { type: 'interval', everySeconds: 60 }, OPEN, KL, 'every minute, Asia/Kuala_Lumpur'],
  ['seconds that are no whole minute', { type: 'interval', everySeconds: 90 }, OPEN, KL, 'every 90 seconds, Asia/Kuala_Lumpur'],
  ['hours', { type: 'interval', everySeconds: 7200 }, OPEN, 'UTC', 'every 2 hours, UTC'],
  ['a day', { type: 'interval', everySeconds: 86_400 }, OPEN, 'UTC', 'every day, UTC'],
  ['days', { type: 'interval', everySeconds: 259_200 }, OPEN, 'UTC', 'every 3 days, UTC'],
  [
    'a start, in the zone',
    { type: 'interval', everySeconds: 3600, startAt: '2030-01-20T01:00:00.000Z' },
    DAY,
    KL,
    'every hour from 20 Jan 2030 09:00, 06:00–18:00 Asia/Kuala_Lumpur',
  ],
  ['once, in the zone', { type: 'once', at: '2030-01-20T01:30:00.000Z' }, OPEN, KL, 'once at 20 Jan 2030 09:30, Asia/Kuala_Lumpur'],
  ['once, stored past year 9999', { type: 'once', at: '+010000-01-01T00:00:00.000Z' }, OPEN, KL, 'once at 1 Jan 10000 08:00, Asia/Kuala_Lumpur'],
  ['once, stored as no instant at all', { type: 'once', at: 'soon' }, OPEN, KL, 'once at soon, Asia/Kuala_Lumpur'],
  [
    'a window across midnight',
    { type: 'interval', everySeconds: 600 },
    { start: '22:00', end: '06:00' },
    'UTC',
    'every 10 minutes, 22:00–06:00 (overnight) UTC',
  ],
  ['a window to midnight', { type: 'interval', everySeconds: 600 }, { start: '18:00', end: '24:00' }, 'UTC', 'every 10 minutes, 18:00–24:00 UTC'],
  ['cron on two weekdays', { type: 'cron', expression: '30 9 * * 1,3' }, OPEN, 'Europe/Berlin', 'at 09:30 on Mon, Wed (cron 30 9 * * 1,3), Europe/Berlin'],
  ['cron with a window', { type: 'cron', expression: '*/15 * * * *' }, DAY, KL, 'every 15 minutes (cron */15 * * * *), 06:00–18:00 Asia/Kuala_Lumpur'],
  ['cron without plain reading', { type: 'cron', expression: '0 9 L * *' }, OPEN, KL, 'on cron 0 9 L * *, Asia/Kuala_Lumpur'],
])('%s', (_name, schedule, window, zone, words) => {
  expect(scheduleInWords(schedule, window, zone)).toBe(words);
});

test.each<[string, string | null]>([
  ['* * * * *', 'every minute'],
  ['*/5 * * * *', 'every 5 minutes'],
  ['*/5 * * * 1-5', 'every 5 minutes on Mon–Fri'],
  ['*/7 * * * *', null], // fires at :56 and :00: no "every 7 minutes"
  ['15 * * * *', 'every hour at :15'],
  ['0 */2 * * *', 'every 2 hours at :00'],
  ['0 */5 * * *', null], // 20:00 then 00:00
  ['0 9 * * *', 'at 09:00 every day'],
  ['0 9,17 * * *', 'at 09:00 and 17:00 every day'],
  ['0,30 9,17 * * *', 'at 09:00, 09:30, 17:00 and 17:30 every day'],
  ['0 9-17 * * 1-5', 'every hour from 09:00 to 17:00 on Mon–Fri'],
  ['*/15 9-17 * * *', 'every 15 minutes from 09:00 to 17:45 every day'],
  ['* 9 * * *', 'every minute from 09:00 to 09:59 every day'],
  ['30 9 * * 1,3', 'at 09:30 on Mon, Wed'],
  ['0 10 * * 6,0', 'at 10:00 on Sat, Sun'],
  ['0 10 * * 7', 'at 10:00 on Sun'],
  ['0 10 * * 0-6', 'at 10:00 every day'],
  ['0 10 * * 1,2,3,5', 'at 10:00 on Mon–Wed, Fri'],
  ['0 8 1 * *', 'at 08:00 on day 1 of the month'],
  ['0 8 1,15 * *', 'at 08:00 on days 1, 15 of the month'],
  ['0 8 1 1,7 *', 'at 08:00 on day 1 of Jan, Jul'],
  ['0 8 * 12 *', 'at 08:00 every day in Dec'],
  ['0 8 1 * 1', 'at 08:00 on day 1 of the month or on Mon'],
  ['@daily', 'at 00:00 every day'],
  ['@hourly', 'every hour at :00'],
  ['@weekly', 'at 00:00 on Sun'],
  ['@monthly', 'at 00:00 on day 1 of the month'],
  ['@yearly', 'at 00:00 on day 1 of Jan'],
  ['0 9 * * MON', null],
  ['0 9 ? * *', null],
  ['0 9 1#2 * *', null],
  ['61 9 * * *', null],
  ['0 9 * *', null],
])('cron %s', (expression, words) => {
  expect(cronInWords(expression)).toBe(words);
});

// The clock times the words name are the times croner fires at, on the days they name.
test.each([
  ['30 9 * * 1,3', ['09:30 Mon', '09:30 Wed', '09:30 Mon']],
  ['0 9,17 * * *', ['09:00 Sun', '17:00 Sun', '09:00 Mon']],
  ['0 8 1 * 1', ['08:00 Mon', '08:00 Fri', '08:00 Mon']], // 1 Feb 2030 is a Friday: either day field
])('croner agrees: %s', (expression, expected) => {
  const cron = new Cron(expression, { timezone: 'UTC', paused: true });
  let at: Date | null = new Date('2030-01-27T00:00:00Z'); // a Sunday
  const seen: string[] = [];
  for (let i = 0; i < 3 && at; i++) {
    at = cron.nextRun(at);
    if (at) seen.push(`${at.toISOString().slice(11, 16)} ${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][at.getUTCDay()]}`);
  }
  expect(seen).toEqual(expected);
});
