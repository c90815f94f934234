import {
  appendOutcomes,
  coolingWords,
  decideCooling,
  effectivePerMinute,
  paceFactorAt,
  recentFloodWaits,
  type AccountHealth,
} from '@metronome/core';
import type { RunForSend } from '@metronome/db';
import type { JobDeps } from './deps.js';
import type { LaneReport } from './lane-context.js';

/** The account's pace now: the configured one (or the default) times its pace factor, never below 1 a minute. */
export function accountPerMinute(deps: JobDeps, run: RunForSend, now: number): number {
  const configured = run.account.maxSendPerMinute ?? deps.settings.defaultMaxSendPerMinute;
  const h = run.account.health;
  return effectivePerMinute(configured, paceFactorAt(h.paceFactor, h.paceSince?.getTime() ?? null, now, deps.settings.cooling));
}

/**
 * After a job: adds its flood waits and finished chats to the account's health, decides
 * whether the account cools (libs/core decideCooling), and writes what changed in one
 * statement. A healthy account whose record is already full of deliveries writes nothing, so
 * the steady state costs no statement. Returns the cooling it began (null: none).
 * The account lock is held, so no other job of the account writes its health meanwhile.
 */
export async function recordHealth(deps: JobDeps, run: RunForSend, report: LaneReport): Promise<{ until: number; reason: string } | null> {
  const s = deps.settings.cooling;
  const now = deps.clock.now();
  const h = run.account.health;
  const health: AccountHealth = {
    floodWaits: recentFloodWaits([...h.floodWaits.map((d) => d.getTime()), ...report.floodWaits], now),
    outcomes: appendOutcomes(h.outcomes, report.outcomes, s.failureWindow),
    paceFactor: h.paceFactor,
    paceSince: h.paceSince?.getTime() ?? null,
    lastCooling: h.lastCooledAt && h.lastCoolingMs ? { at: h.lastCooledAt.getTime(), ms: h.lastCoolingMs } : null,
  };
  const lastWait = report.floodWaits.length > 0 ? Math.max(...report.floodWaits) : null;
  const configured = run.account.maxSendPerMinute ?? deps.settings.defaultMaxSendPerMinute;
  const decision = decideCooling(health, s, configured, now, lastWait);
  const at = new Date(now);
  if (decision.cool) {
    const { until, reason, ms } = decision.cool;
    const cooled = await deps.cooling.cool(run.account.id, { since: at, until: new Date(until), reason, ms, paceFactor: decision.paceFactor, paceSince: new Date(until) }, at);
    if (!cooled) return null;
    deps.events.emit('account:cooling', { accountId: run.account.id, platform: run.account.platform, reason, until, paceFactor: decision.paceFactor, words: coolingWords(reason, s) });
    return { until, reason };
  }
  // Deliveries into a record already full of deliveries leave it as it was: no statement.
  const unchanged = report.floodWaits.length === 0 && health.outcomes === h.outcomes && health.floodWaits.length === h.floodWaits.length;
  if (unchanged) return null;
  await deps.cooling.recordHealth(
    run.account.id,
    { floodWaits: health.floodWaits.map((t) => new Date(t)), outcomes: health.outcomes, paceFactor: decision.paceFactor, paceSince: decision.paceSince === null ? null : new Date(decision.paceSince) },
    at,
  );
  return null;
}
