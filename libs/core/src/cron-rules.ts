import { Cron, CronPattern } from 'croner';
import { DateTime } from 'luxon';
import { cronClock } from './cron-clock.js';

// A campaign's cron: five classic fields (no seconds or year field), no two occurrences closer than the deployment's minimum, DST changes included.

const FIELDS = 'minute hour day-of-month month day-of-week';

/** Classic cron's nicknames. A Map, not an object literal: any text is looked up here, and `__proto__` or `constructor` must find nothing. */
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
const DST_HORIZON_DAYS = 366;
const DAY_HORIZON = { days: 1000, years: 8 };

export function cronFields(expression: string): string[] | null {
  const trimmed = expression.trim();
  const expanded = NICKNAMES.get(trimmed.toLowerCase()) ?? trimmed;
  const fields = expanded.split(/\s+/);
  return fields.length === 5 ? fields : null;
}

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

/** Why occurrences of `expression` can fall closer than `minSeconds` (within a day, across days, around DST changes on the real clock), or null. */
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

function timesOfDay(pattern: CronPattern): number[] {
  const times: number[] = [];
  for (let h = 0; h < 24; h++) {
    if (!pattern.hour[h]) continue;
    for (let m = 0; m < 60; m++) if (pattern.minute[m]) times.push(h * 60 + m);
  }
  return times;
}

/** The fewest days between two consecutive matching days over the horizon (null: fewer than two), counted in UTC, where every day has 24 hours. */
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
