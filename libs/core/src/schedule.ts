import { nextCronInstant } from './cron-clock.js';

// What a cron expression must be to be accepted (cron-rules.ts), exported with the schedule maths.
export { cronFields, cronGapProblem, cronProblem } from './cron-rules.js';

export type Schedule = { type: 'interval'; everySeconds: number; startAt?: string } | { type: 'cron'; expression: string } | { type: 'once'; at: string };

/**
 * The first occurrence of a new (or rescheduled) campaign, at or after `now`.
 * interval: `startAt` when given and still ahead, otherwise the next point of the grid
 * `startAt + k·everySeconds` (or `now` itself when no `startAt` is given); cron: the next match
 * after now; once: `at` (even if past: a once-campaign created late still runs once).
 */
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

/**
 * The next occurrence of a campaign whose schedule (or timezone, or activity) was edited.
 * Like `firstOccurrence`, but an interval campaign that already ran never comes due less than
 * `everySeconds` after its last scheduled run: an edit must not cause an early run.
 */
export function rescheduledOccurrence(schedule: Schedule, timezone: string, now: Date, lastScheduledAt: Date | null): Date | null {
  const first = firstOccurrence(schedule, timezone, now);
  if (!first || !lastScheduledAt || schedule.type !== 'interval') return first;
  return new Date(Math.max(first.getTime(), lastScheduledAt.getTime() + schedule.everySeconds * 1000));
}

/**
 * The occurrence after `previous` (the one just turned into a run). Missed occurrences are
 * coalesced: if the scheduler is behind by several periods, the result is the latest
 * occurrence not after `now` (due at once) rather than a backlog of runs — the count of
 * occurrences skipped that way is returned so it can be reported.
 */
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
      // Walk forward over matches already in the past, keeping the latest one.
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

/** The occurrence of an interval or cron schedule right after `at` (null for once, or a cron that ends). */
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

/**
 * How many occurrences have come due by `now`, counting the held one at `dueAt` (0 when
 * `dueAt` is still ahead). A campaign that cannot run is held at its due occurrence; each later
 * occurrence that passes meanwhile counts as one more missed in a row.
 */
export function occurrencesDue(schedule: Schedule, timezone: string, dueAt: Date, now: Date): number {
  if (dueAt.getTime() > now.getTime()) return 0;
  const { at, coalesced } = nextOccurrence(schedule, timezone, dueAt, now);
  return at && at.getTime() <= now.getTime() ? 2 + coalesced : 1;
}
