import { followingOccurrence, type Schedule } from './schedule.js';

/** Occurrences the scheduler reaches late: `skip` runs none, `latest` the latest, `all` each in order (at most CATCH_UP_ALL_LIMIT). */
export type CatchUpPolicy = 'skip' | 'latest' | 'all';

export const CATCH_UP_POLICIES: readonly CatchUpPolicy[] = ['skip', 'latest', 'all'];

/** A campaign's catch-up setting; `maxLatenessSeconds` null: the default (see latenessLimitMs). */
export interface CatchUp {
  policy: CatchUpPolicy;
  maxLatenessSeconds: number | null;
}

export const DEFAULT_CATCH_UP: CatchUp = { policy: 'latest', maxLatenessSeconds: null };

export const MAX_LATENESS_SECONDS = 86_400;

export const CATCH_UP_ALL_LIMIT = 100;

/** Under `skip`, how late an occurrence may be reached and still be on time: a running scheduler reaches each within a tick or two. */
export const ON_TIME_MS = 10_000;

/** Why an occurrence was not turned into a run (label of metronome_occurrences_skipped_total). */
export type SkipReason = 'too_late' | 'superseded' | 'missed' | 'catch_up_limit';

export const SKIP_REASONS: readonly SkipReason[] = ['too_late', 'superseded', 'missed', 'catch_up_limit'];

export type SkipCounts = Record<SkipReason, number>;

export function noSkips(): SkipCounts {
  return { too_late: 0, superseded: 0, missed: 0, catch_up_limit: 0 };
}

export function totalSkipped(s: SkipCounts): number {
  return s.too_late + s.superseded + s.missed + s.catch_up_limit;
}

const DAY_MS = MAX_LATENESS_SECONDS * 1000;

/** How late occurrence `at` may become a run: maxLatenessSeconds, else one interval (a cron's gap to the next), at most a day. */
export function latenessLimitMs(catchUp: CatchUp, schedule: Schedule, at: Date, following: Date | null): number {
  if (catchUp.maxLatenessSeconds !== null) return Math.min(catchUp.maxLatenessSeconds * 1000, DAY_MS);
  if (schedule.type === 'interval') return Math.min(schedule.everySeconds * 1000, DAY_MS);
  return following ? Math.min(following.getTime() - at.getTime(), DAY_MS) : DAY_MS;
}

export interface CatchUpInput {
  schedule: Schedule;
  timezone: string;
  catchUp: CatchUp;
  dueAt: Date;
  /** occurrences up to this one were accepted by an earlier `all` catch-up: lateness no longer applies */
  acceptedThrough: Date | null;
}

export interface CatchUpDecision {
  run: Date | null;
  next: Date | null;
  skipped: SkipCounts;
  lastSkippedAt: Date | null;
  acceptedThrough: Date | null;
}

/** Which due occurrences become runs: each older than its lateness limit is skipped (`too_late`), the policy picks among the rest; a once-campaign always runs. */
export function planCatchUp(c: CatchUpInput, now: Date): CatchUpDecision {
  const skipped = noSkips();
  if (c.schedule.type === 'once') return { run: c.dueAt, next: null, skipped, lastSkippedAt: null, acceptedThrough: null };

  const t = now.getTime();
  const kept: { at: Date; limitMs: number }[] = [];
  let lastSkippedAt: Date | null = null;
  let at: Date | null = c.dueAt;
  let upcoming: Date | null = null;
  while (at) {
    const following = followingOccurrence(c.schedule, c.timezone, at);
    const limitMs = latenessLimitMs(c.catchUp, c.schedule, at, following);
    const accepted = c.acceptedThrough !== null && at.getTime() <= c.acceptedThrough.getTime();
    if (!accepted && t - at.getTime() > limitMs) {
      skipped.too_late++;
      lastSkippedAt = at;
    } else {
      kept.push({ at, limitMs });
    }
    if (!following || following.getTime() > t) {
      upcoming = following;
      break;
    }
    at = following;
  }

  const skip = (reason: SkipReason, list: { at: Date }[]) => {
    skipped[reason] += list.length;
    const last = list[list.length - 1];
    if (last && (!lastSkippedAt || last.at > lastSkippedAt)) lastSkippedAt = last.at;
  };
  const latest = kept[kept.length - 1];
  switch (c.catchUp.policy) {
    case 'latest':
      skip('superseded', kept.slice(0, -1));
      return { run: latest?.at ?? null, next: upcoming, skipped, lastSkippedAt, acceptedThrough: null };
    case 'skip': {
      const onTime = latest !== undefined && t - latest.at.getTime() <= Math.min(ON_TIME_MS, latest.limitMs);
      skip('missed', onTime ? kept.slice(0, -1) : kept);
      return { run: onTime ? latest.at : null, next: upcoming, skipped, lastSkippedAt, acceptedThrough: null };
    }
    case 'all': {
      const extra = Math.max(0, kept.length - CATCH_UP_ALL_LIMIT);
      skip('catch_up_limit', kept.slice(0, extra));
      const backlog = kept.slice(extra);
      const [first, second] = backlog;
      // the rest wait for this run to end (one open run per campaign), next_run_at stepping through them
      return {
        run: first?.at ?? null,
        next: second?.at ?? upcoming,
        skipped,
        lastSkippedAt,
        acceptedThrough: second ? backlog[backlog.length - 1]!.at : null,
      };
    }
  }
}
