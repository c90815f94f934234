import { Cron } from 'croner';
import { IANAZone } from 'luxon';
import { localTimeToInstant } from './delivery-window.js';

// The DST rule for cron campaigns (CONTRACT, Campaigns): a repeated wall time fires once, a time in a spring-forward gap just after it. croner
// alone fires a repeated hour twice, so matches are found on the wall clock read as UTC and placed by the delivery window's rule.

const MINUTE = 60_000;
/** At most this many matches at or before `after` are passed over: a DST shift is hours at most. */
const MAX_STEPS = 10_000;

/** The first instant strictly after `after` at which `expression` fires in `timezone`, or null. */
export function nextCronInstant(expression: string, timezone: string, after: Date): Date | null {
  return cronClock(expression, timezone)(after);
}

export function cronClock(expression: string, timezone: string): (after: Date) => Date | null {
  const wall = new Cron(expression, { timezone: 'UTC', paused: true });
  const zone = IANAZone.create(timezone);
  return (after) => nextOn(wall, zone, timezone, after);
}

function nextOn(wall: Cron, zone: IANAZone, timezone: string, after: Date): Date | null {
  const t = after.getTime();
  let from = new Date(t + zone.offset(t) * MINUTE);
  for (let i = 0; i < MAX_STEPS; i++) {
    const match = wall.nextRun(from);
    if (!match) return null;
    const instant = localTimeToInstant(
      { year: match.getUTCFullYear(), month: match.getUTCMonth() + 1, day: match.getUTCDate() },
      match.getUTCHours() * 60 + match.getUTCMinutes(),
      timezone,
    );
    // at or before `after`: a repeated wall time already passed, or a gap time that already fired
    if (instant > t) return new Date(instant);
    from = match;
  }
  return null;
}
