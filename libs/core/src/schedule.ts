import { nextCronInstant } from './cron-clock.js';

export { cronFields, cronGapProblem, cronProblem } from './cron-rules.js';

export type Schedule = { type: 'interval'; everySeconds: number; startAt?: string } | { type: 'cron'; expression: string } | { type: 'once'; at: string };

/** The first occurrence of a new or rescheduled campaign: interval on the `startAt` grid (or `now`), cron's next match, once's `at` even if past. */
export function firstOccurrence(schedule: Schedule, timezone: string, now: Date): Date | null {
  switch (schedule.type) {
    case 'interval': {
      if (!schedule.startAt) return now;
      const start = Date.parse(schedule.startAt);
      if (start >= now.getTime()) return new Date(start);
      return gridPointAtOrAfter(start, schedule.everySeconds * 1000, now.getTime());
    }
    case 'cron':
      return nextCron(schedule.expression, timezone, new Date(now.getTime() - 1));
    case 'once':
      return new Date(schedule.at);
  }
}

/** Like firstOccurrence, but an interval campaign never comes due sooner than `everySeconds` after its last run: an edit must not cause an early run. */
export function rescheduledOccurrence(schedule: Schedule, timezone: string, now: Date, lastScheduledAt: Date | null): Date | null {
  const first = firstOccurrence(schedule, timezone, now);
  if (!first || !lastScheduledAt || schedule.type !== 'interval') return first;
  return new Date(Math.max(first.getTime(), lastScheduledAt.getTime() + schedule.everySeconds * 1000));
}

/** The occurrence after `previous`; several missed periods coalesce into the latest one due, and their count is returned. */
export function nextOccurrence(schedule: Schedule, timezone: string, previous: Date, now: Date): { at: Date | null; coalesced: number } {
  switch (schedule.type) {
    case 'interval': {
      const every = schedule.everySeconds * 1000;
      const next = previous.getTime() + every;
      if (next > now.getTime()) return { at: new Date(next), coalesced: 0 };
      const behind = Math.floor((now.getTime() - next) / every);
      return { at: new Date(next + behind * every), coalesced: behind };
    }
    case 'cron': {
      let at = nextCron(schedule.expression, timezone, previous);
      let coalesced = 0;
      while (at) {
        const after = nextCron(schedule.expression, timezone, at);
        if (!after || after.getTime() > now.getTime()) break;
        at = after;
        coalesced++;
      }
      return { at, coalesced };
    }
    case 'once':
      return { at: null, coalesced: 0 };
  }
}

// Through the DST rule of cron-clock.ts: a repeated wall time fires once, a skipped one after the gap.
function nextCron(expression: string, timezone: string, after: Date): Date | null {
  return nextCronInstant(expression, timezone, after);
}

export function followingOccurrence(schedule: Schedule, timezone: string, at: Date): Date | null {
  switch (schedule.type) {
    case 'interval':
      return new Date(at.getTime() + schedule.everySeconds * 1000);
    case 'cron':
      return nextCron(schedule.expression, timezone, at);
    case 'once':
      return null;
  }
}

function gridPointAtOrAfter(origin: number, step: number, t: number): Date {
  const k = Math.ceil((t - origin) / step);
  return new Date(origin + Math.max(0, k) * step);
}

/** How many occurrences have come due by `now`, counting the held one at `dueAt` (0 while it is ahead). */
export function occurrencesDue(schedule: Schedule, timezone: string, dueAt: Date, now: Date): number {
  if (dueAt.getTime() > now.getTime()) return 0;
  const { at, coalesced } = nextOccurrence(schedule, timezone, dueAt, now);
  return at && at.getTime() <= now.getTime() ? 2 + coalesced : 1;
}
