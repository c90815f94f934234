import {
  CHAT_WAIT_CODES,
  DEFAULT_COOLING,
  effectivePerMinute,
  explainRun,
  isRunStatusIn,
  newChatHold,
  OPEN_RUN_STATUSES,
  paceFactorAt,
  runEta,
  slotIntervalMs,
  type CoolingSettings,
  type RunFacts,
} from '@metronome/core';
import { countRuns, emptyCounts, RunWaitingRepository, type RunRow, type RunWaitingRow } from '@metronome/db';
import { redisKeys } from '@metronome/redis';
import type { ApiContext } from './context.js';
import { runView, type RunExplanation } from './schemas/runs.js';
import { withTimeout } from './timeout.js';

const REDIS_READ_TIMEOUT_MS = 1000;
// The sender's RATE_BURST is not the API's to know; at its default of 1 an account's next
// slot is free once the pace's theoretical arrival time (TAT) has passed.
const ASSUMED_BURST = 1;

/** A run's answer (CONTRACT §3 run). */
export type RunView = ReturnType<typeof runView>;

/**
 * How every run answer is built (the list, one run, the commands, run now): counts from
 * run_targets and the explanation libs/core gives (waiting, eta), read the same way for each.
 */
export function runViews(ctx: ApiContext) {
  const waitingRepo = new RunWaitingRepository(ctx.db);
  const keys = redisKeys(ctx.config.keyPrefix);

  /**
   * Each account's pace (GCRA TAT, ms), human gap and cap, and whether its lock is held, in one MGET. Redis only
   * speeds things up: when it does not answer, the runs are explained without it.
   */
  const accountStates = async (accountIds: string[]): Promise<Map<string, AccountState>> => {
    const out = new Map<string, AccountState>();
    if (accountIds.length === 0) return out;
    try {
      const read = accountIds.flatMap((id) => [keys.accountPace(id), keys.accountLock(id), keys.accountGap(id), keys.accountCap(id)]);
      const values = await withTimeout(ctx.redis.mget(...read), REDIS_READ_TIMEOUT_MS, 'pace read');
      const at = (i: number) => Number(values[i] ?? 0) || 0;
      // the human gap (sendDelaySeconds) holds the next send like the pace does
      accountIds.forEach((id, i) => out.set(id, { tat: Math.max(at(4 * i), at(4 * i + 2)), locked: values[4 * i + 1] != null, capFreeAt: at(4 * i + 3) }));
    } catch (err) {
      ctx.logger.warn({ err }, 'could not read account paces; runs are explained without them');
    }
    return out;
  };

  /** The facts libs/core explains a run from, and its explanation, for every run shown. */
  const explain = async (rows: RunRow[]): Promise<Map<string, { facts: RunFacts; explanation: RunExplanation }>> => {
    const now = ctx.now();
    const found = await waitingRepo.factsOfRuns(
      rows.map((r) => r.id),
      now,
      CHAT_WAIT_CODES,
    );
    const open = [...found.values()].filter((f) => isRunStatusIn(f.status, OPEN_RUN_STATUSES));
    const states = await accountStates([...new Set(open.map((f) => f.account.id))]);
    const out = new Map<string, { facts: RunFacts; explanation: RunExplanation }>();
    for (const row of found.values()) {
      const facts = toFacts(row, states.get(row.account.id), now, ctx.config.defaultMaxSendPerMinute, ctx.config.cooling ?? DEFAULT_COOLING);
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

/** What Redis knows of an account: its pace (GCRA TAT, or its human gap when later), its lock, and when its cap frees a slot (ms; 0: none). */
interface AccountState {
  tat: number;
  locked: boolean;
  capFreeAt: number;
}

/** A run's facts as libs/core reads them: the account's pace, lock and cap from Redis folded in. */
function toFacts(row: RunWaitingRow, state: AccountState | undefined, now: Date, defaultPerMinute: number, cooling: CoolingSettings): RunFacts {
  // the pace in force: lowered by automatic cooling, recovering since
  const a = row.account;
  const perMinute = effectivePerMinute(
    a.maxSendPerMinute ?? defaultPerMinute,
    paceFactorAt(a.paceFactor, a.paceSince?.getTime() ?? null, now.getTime(), cooling),
  );
  const freeAt = state ? state.tat - (ASSUMED_BURST - 1) * slotIntervalMs(perMinute) : 0;
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
    paceFreeAt: freeAt > now.getTime() ? new Date(freeAt) : null,
    capFreeAt: state && state.capFreeAt > now.getTime() ? new Date(state.capFreeAt) : null,
    accountBusy: (state?.locked ?? false) && row.otherRunActive,
  };
}
