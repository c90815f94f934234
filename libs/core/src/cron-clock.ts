import { Cron } from 'croner';
import { IANAZone } from 'luxon';
import { localTimeToInstant } from './delivery-window.js';

// The DST rule for cron campaigns (CONTRACT, Campaigns): a cron names wall-clock times in the
// campaign's zone. A wall time that happens twice (fall-back) fires once, at its first
// instant; a wall time that does not exist (spring-forward gap) fires at the first instant
// after the gap, and several such times in one gap fire once there. croner alone fires a
// repeated hour's times twice (`*/15 1 * * *` in America/New_York), so the pattern is matched
// on the wall clock (read as UTC, where no time repeats or is missing) and each match is turned
// into its instant by the same rule the delivery window uses.

const MINUTE = 60_000;
/** Matches that resolve to an instant not after `after`; bounded because a DST shift is at most hours. */
const MAX_STEPS = 10_000;

/** The first instant strictly after `after` at which `expression` fires in `timezone`, or null. */
export function nextCronInstant(expression: string, timezone: string, after: Date): Date | null {
  return cronClock(expression, timezone)(after);
}

/** nextCronInstant for one expression and zone, parsed once: for callers that step through many occurrences. */
export function cronClock(expression: string, timezone: string): (after: Date) => Date | null {
  const wall = new Cron(expression, { timezone: 'UTC', paused: true });
  const zone = IANAZone.create(timezone);
  return (after) => nextOn(wall, zone, timezone, after);
}

function nextOn(wall: Cron, zone: IANAZone, timezone: string, after: Date): Date | null {
  const t = after.getTime();
  // `after` on the zone's wall clock, read as UTC
  let from = new Date(t + zone.offset(t) * MINUTE);
  for (let i = 0; i < MAX_STEPS; i++) {
    const match = wall.nextRun(from);
    if (!match) return null;
    const instant = localTimeToInstant(
      { year: match.getUTCFullYear(), month: match.getUTCMonth() + 1, day: match.getUTCDate() },
      match.getUTCHours() * 60 + match.getUTCMinutes(),
      timezone,
    );
    // A match at or before `after` is a repeated wall time already passed (or a gap time that
    // already fired at the gap's end): it does not fire again.
    if (instant > t) return new Date(instant);
    from = match;
  }
  return null;
}
