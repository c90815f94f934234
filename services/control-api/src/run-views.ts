import {
  DEFAULT_COOLING,
  effectivePerMinute,
  explainRun,
  isRunStatusIn,
  limitFreeTimes,
  newChatHold,
  OPEN_RUN_STATUSES,
  paceFactorAt,
  runEta,
  type CoolingSettings,
  type LimitState,
  type RunFacts,
} from '@metronome/core';
import { countRuns, emptyCounts, RunWaitingRepository, type RunRow, type RunWaitingRow } from '@metronome/db';
import { readLimitStates, redisKeys } from '@metronome/redis';
import type { ApiContext } from './context.js';
import { runView, type RunExplanation } from './schemas/runs.js';
import { withTimeout } from './timeout.js';

const REDIS_READ_TIMEOUT_MS = 1000;

/** A run's answer (CONTRACT §3 run). */
export type RunView = ReturnType<typeof runView>;

/**
 * How every run answer is built (the list, one run, the commands, run now): counts from
 * run_targets and the explanation libs/core gives (waiting, eta), read the same way for each.
 */
export function runViews(ctx: ApiContext) {
  const waitingRepo = new RunWaitingRepository(ctx.db);
  const keys = redisKeys(ctx.config.keyPrefix);

  /** Each account's limit state (libs/redis readLimitStates); without Redis the runs are explained without it. */
  const accountStates = async (accountIds: string[]): Promise<Map<string, LimitState>> => {
    try {
      return await withTimeout(readLimitStates(ctx.redis, keys, accountIds), REDIS_READ_TIMEOUT_MS, 'pace read');
    } catch (err) {
      ctx.logger.warn({ err }, 'could not read account paces; runs are explained without them');
      return new Map();
    }
  };

  /** The facts libs/core explains a run from, and its explanation, for every run shown. */
  const explain = async (rows: RunRow[]): Promise<Map<string, { facts: RunFacts; explanation: RunExplanation }>> => {
    const now = ctx.now();
    const found = await waitingRepo.factsOfRuns(
      rows.map((r) => r.id),
      now,
    );
    const open = [...found.values()].filter((f) => isRunStatusIn(f.status, OPEN_RUN_STATUSES));
    const states = await accountStates([...new Set(open.map((f) => f.account.id))]);
    const out = new Map<string, { facts: RunFacts; explanation: RunExplanation }>();
    for (const row of found.values()) {
      const pace = { defaultPerMinute: ctx.config.defaultMaxSendPerMinute, burst: ctx.config.rateBurst ?? 1 };
      const facts = toFacts(row, states.get(row.account.id), now, pace, ctx.config.cooling ?? DEFAULT_COOLING);
      out.set(row.runId, { facts, explanation: { waiting: explainRun(facts, now), eta: runEta(facts, now) } });
    }
    return out;
  };

  // Counts are derived from run_targets for every run shown, in one query per answer; the
  // explanations in one more, and one Redis read.
  const withCounts = async (rows: RunRow[]): Promise<RunView[]> => {
    const [counts, explained] = await Promise.all([
      countRuns(
        ctx.db,
        rows.map((r) => r.id),
      ),
      explain(rows),
    ]);
    return rows.map((r) => runView(r, counts.get(r.id) ?? emptyCounts(r.total), explained.get(r.id)?.explanation ?? { waiting: null, eta: null }));
  };
  const one = async (row: RunRow): Promise<RunView> => (await withCounts([row]))[0] as RunView;

  return { explain, withCounts, one };
}

/** A run's facts as libs/core reads them: each limit's free time from Redis read by the limit (limits.ts `freeAt`). */
function toFacts(
  row: RunWaitingRow,
  state: LimitState | undefined,
  now: Date,
  pace: { defaultPerMinute: number; burst: number },
  cooling: CoolingSettings,
): RunFacts {
  // the pace in force: lowered by automatic cooling, recovering since
  const a = row.account;
  const perMinute = effectivePerMinute(
    a.maxSendPerMinute ?? pace.defaultPerMinute,
    paceFactorAt(a.paceFactor, a.paceSince?.getTime() ?? null, now.getTime(), cooling),
  );
  const dueSince = row.dueSince && row.dueSince.getTime() > row.scheduledAt.getTime() ? row.dueSince : row.scheduledAt;
  return {
    status: row.status,
    pausedReason: row.pausedReason,
    scheduledAt: row.scheduledAt,
    firstSendAt: row.firstSendAt,
    windowEndAt: row.windowEndAt,
    timezone: row.timezone,
    window: { start: row.windowStart, end: row.windowEnd },
    autoResume: row.autoResume,
    everySeconds: row.everySeconds,
    partsPerChat: row.partsPerChat,
    account: {
      id: a.id,
      platform: a.platform,
      status: a.status,
      blockedUntil: a.blockedUntil,
      perMinute,
      coolingUntil: a.coolingUntil,
      coolingReason: a.coolingReason,
      restrictedBecause: a.restrictedBecause,
      proxyFailure: a.proxyFailure,
      newChatHold: newChatHold(a.newChats, now),
    },
    total: row.total,
    skipped: row.skipped,
    pending: row.pending,
    inFlight: row.inFlight,
    due: row.due,
    dueSince: row.due > 0 ? dueSince : null,
    holds: row.holds,
    ...limitFreeTimes(state, { perMinute, burst: pace.burst }, now),
    accountBusy: (state?.locked ?? false) && row.otherRunActive,
  };
}
