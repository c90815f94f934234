import { Cron, CronPattern } from 'croner';
import { DateTime } from 'luxon';
import { cronClock } from './cron-clock.js';

// What a campaign's cron expression must be: five fields (minute hour day-of-month month
// day-of-week, as classic cron), never a seconds or a year field, and no two occurrences closer
// together than the deployment's minimum interval, whatever the fields and the zone's
// daylight-saving changes make of them. Pure: the instant the checks start from is passed in.

const FIELDS = 'minute hour day-of-month month day-of-week';

/**
 * The nicknames classic cron knows, each the five fields it stands for. A Map, not an object
 * literal: any text is looked up here, and `__proto__` or `constructor` must find nothing.
 */
const NICKNAMES = new Map<string, string>([
  ['@yearly', '0 0 1 1 *'],
  ['@annually', '0 0 1 1 *'],
  ['@monthly', '0 0 1 * *'],
  ['@weekly', '0 0 * * 0'],
  ['@daily', '0 0 * * *'],
  ['@midnight', '0 0 * * *'],
  ['@hourly', '0 * * * *'],
]);

const MINUTE = 60_000;
const DAY = 86_400_000;
/** how far ahead daylight-saving changes are looked for */
const DST_HORIZON_DAYS = 366;
/** how many matching days (or years) are compared when only days far apart could be too close */
const DAY_HORIZON = { days: 1000, years: 8 };

/** The five fields of `expression` (a nickname expanded), or null when it does not have five. */
export function cronFields(expression: string): string[] | null {
  const trimmed = expression.trim();
  const expanded = NICKNAMES.get(trimmed.toLowerCase()) ?? trimmed;
  const fields = expanded.split(/\s+/);
  return fields.length === 5 ? fields : null;
}

/** Why `expression` is not a five-field cron that matches a future time, or null. */
export function cronProblem(expression: string, timezone: string, now: Date = new Date()): string | null {
  const fields = cronFields(expression);
  if (!fields) return `expected exactly five fields (${FIELDS}) or a nickname such as @hourly; seconds and years are not accepted`;
  try {
    const cron = new Cron(fields.join(' '), { timezone, paused: true, mode: '5-part' });
    if (!cron.nextRun(now)) return 'the expression never matches a future time';
    return null;
  } catch (error) {
    return `not a valid cron expression: ${(error as Error).message}`;
  }
}

/**
 * Why occurrences of a valid five-field `expression` (see cronProblem) can fall closer together
 * than `minSeconds`, or null when they cannot. Three checks, each exact for what it covers:
 * - within a day, on the zone's wall clock: the closest two of the times of day it names
 *   (`0,1 * * * *` → 60 s; `*\/5 * * * *` → 300 s);
 * - across days: the last time of one matching day to the first of the next matching day
 *   (`0,59 0,23 * * *` → 23:59 to 00:00, 60 s), over the next 1,000 matching days (8 years at most);
 * - across every daylight-saving change of `timezone` in the next 366 days, on the real clock:
 *   the instants the schedule really fires at around the change (by the DST rule of
 *   cron-clock.ts), e.g. `2,58 1,3 * * *` in America/New_York fires at 01:58 and, the hour
 *   02:00–03:00 skipped, again 4 minutes later at 03:02.
 */
export function cronGapProblem(expression: string, timezone: string, minSeconds: number, now: Date): string | null {
  // Occurrences are whole distinct minutes: any expression keeps 60 s apart.
  if (minSeconds <= 60) return null;
  const fields = cronFields(expression);
  if (!fields) return null;
  const text = fields.join(' ');
  const tooClose = (ms: number) => ms < minSeconds * 1000;
  const problem = (ms: number, where: string) =>
    `occurrences can fall ${Math.round(ms / 1000)} s apart (${where}), closer than the minimum interval of ${minSeconds} s`;

  const times = timesOfDay(new CronPattern(text, timezone, { mode: '5-part' }));
  for (let i = 1; i < times.length; i++) {
    const gap = (times[i]! - times[i - 1]!) * MINUTE;
    if (tooClose(gap)) return problem(gap, `${clock(times[i - 1]!)} and ${clock(times[i]!)}`);
  }

  const first = times[0]!;
  const last = times[times.length - 1]!;
  const span = (last - first) * MINUTE;
  if (tooClose(DAY - span)) {
    const days = closestMatchingDays(fields, now);
    if (days !== null && tooClose(days * DAY - span)) {
      return problem(days * DAY - span, `${clock(last)} and ${clock(first)} ${days === 1 ? 'the next day' : `${days} days later`}`);
    }
  }

  for (const change of offsetChanges(timezone, now.getTime(), DST_HORIZON_DAYS)) {
    // a pair closer than minSeconds that touches the change starts at most minSeconds before it
    const gap = closestAround(cronClock(text, timezone), change.at - change.shift - minSeconds * 1000, change.at + change.shift);
    if (gap !== null && tooClose(gap.ms)) return problem(gap.ms, `${gap.from} and ${gap.to} UTC, a daylight-saving change`);
  }
  return null;
}

/** The minutes of the day (0–1439) a pattern fires at on a matching day, ascending. */
function timesOfDay(pattern: CronPattern): number[] {
  const times: number[] = [];
  for (let h = 0; h < 24; h++) {
    if (!pattern.hour[h]) continue;
    for (let m = 0; m < 60; m++) if (pattern.minute[m]) times.push(h * 60 + m);
  }
  return times;
}

/**
 * The fewest days between two consecutive days the day fields match, over the horizon; null
 * when fewer than two match in it. Stops early once two consecutive days are seen (it cannot
 * go lower). Days are counted in UTC, where every day has 24 hours: only dates matter here.
 */
function closestMatchingDays(fields: string[], now: Date): number | null {
  const [, , dom, month, dow] = fields;
  const days = new Cron(`0 0 ${dom} ${month} ${dow}`, { timezone: 'UTC', paused: true, mode: '5-part' });
  const end = now.getTime() + DAY_HORIZON.years * 365.25 * DAY;
  let previous = days.nextRun(now);
  let closest: number | null = null;
  for (let i = 0; previous && i < DAY_HORIZON.days; i++) {
    const next = days.nextRun(previous);
    if (!next || next.getTime() > end) break;
    const apart = Math.round((next.getTime() - previous.getTime()) / DAY);
    closest = closest === null ? apart : Math.min(closest, apart);
    if (closest === 1) break;
    previous = next;
  }
  return closest;
}

/** The zone's UTC offset changes after `from`: when (ms) and by how much (ms, absolute). */
function offsetChanges(timezone: string, from: number, horizonDays: number): { at: number; shift: number }[] {
  const offset = (ms: number) => DateTime.fromMillis(ms, { zone: timezone }).offset;
  const changes: { at: number; shift: number }[] = [];
  for (let day = 0; day < horizonDays; day++) {
    let lo = from + day * DAY;
    let hi = lo + DAY;
    const before = offset(lo);
    const after = offset(hi);
    if (before === after) continue;
    // the first minute with the new offset: changes happen on whole minutes
    while (hi - lo > MINUTE) {
      const mid = lo + Math.floor((hi - lo) / MINUTE / 2) * MINUTE;
      if (offset(mid) === before) lo = mid;
      else hi = mid;
    }
    changes.push({ at: hi, shift: Math.abs(after - before) * MINUTE });
  }
  return changes;
}

/**
 * The closest two consecutive occurrences, as the scheduler fires them, among those from the
 * first one after `from` to the first one after `to`. Few: the window is twice a daylight-saving
 * shift plus the minimum interval and, by the checks above, occurrences are already more than a
 * minute apart.
 */
function closestAround(next: (after: Date) => Date | null, from: number, to: number): { ms: number; from: string; to: string } | null {
  let previous: Date | null = next(new Date(from - 1));
  let closest: { ms: number; from: string; to: string } | null = null;
  while (previous) {
    const following = next(previous);
    if (!following) break;
    const ms = following.getTime() - previous.getTime();
    if (closest === null || ms < closest.ms) closest = { ms, from: hhmm(previous), to: hhmm(following) };
    if (previous.getTime() > to) break;
    previous = following;
  }
  return closest;
}

function clock(minuteOfDay: number): string {
  return `${String(Math.floor(minuteOfDay / 60)).padStart(2, '0')}:${String(minuteOfDay % 60).padStart(2, '0')}`;
}

function hhmm(d: Date): string {
  return d.toISOString().slice(0, 16).replace('T', ' ');
}
