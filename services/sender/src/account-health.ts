import {
  appendOutcomes,
  coolingWords,
  decideCooling,
  effectivePerMinute,
  paceFactorAt,
  recentFloodWaits,
  type AccountHealth,
  type CoolingReason,
} from '@metronome/core';
import type { HealthWrite, RunForSend } from '@metronome/db';
import type { JobDeps } from './deps.js';

/** The account's pace now: the configured one (or the default) times its pace factor, never below 1 a minute. */
export function accountPerMinute(deps: JobDeps, run: RunForSend, now: number): number {
  const configured = run.account.maxSendPerMinute ?? deps.settings.defaultMaxSendPerMinute;
  const h = run.account.health;
  return effectivePerMinute(configured, paceFactorAt(h.paceFactor, h.paceSince?.getTime() ?? null, now, deps.settings.cooling));
}

/** What a job saw of its account's health (the lanes' LaneReport carries both). */
export interface JobHealthFacts {
  /** when the platform made the account wait during this job */
  floodWaits: number[];
  /** one letter per chat the job finished: delivered (s) or failed for good (f) */
  outcomes: string;
}

/** What a job's end does to its account's health: cool it, write what changed, or nothing. */
export type HealthPlan =
  | { kind: 'cool'; until: number; reason: CoolingReason; ms: number; paceFactor: number }
  | { kind: 'write'; write: HealthWrite }
  | { kind: 'unchanged' };

/**
 * After a job's lanes have stopped: adds its flood waits and finished chats to the account's
 * health and decides whether the account cools (libs/core decideCooling). A healthy account
 * whose record is already full of deliveries is unchanged, so the steady state costs no
 * statement; a write rides on the job's last write when it can (send-lanes.ts).
 */
export function planHealth(deps: JobDeps, run: RunForSend, report: JobHealthFacts): HealthPlan {
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
  if (decision.cool) return { kind: 'cool', ...decision.cool, paceFactor: decision.paceFactor };
  // Deliveries into a record already full of deliveries leave it as it was: no statement.
  const unchanged = report.floodWaits.length === 0 && health.outcomes === h.outcomes && health.floodWaits.length === h.floodWaits.length;
  if (unchanged) return { kind: 'unchanged' };
  return {
    kind: 'write',
    write: { floodWaits: health.floodWaits.map((t) => new Date(t)), outcomes: health.outcomes, paceFactor: decision.paceFactor, paceSince: decision.paceSince === null ? null : new Date(decision.paceSince) },
  };
}

/**
 * Carries out a job's health plan once its last write is done (`written`: the health rode on
 * it). Returns the cooling it began (null: none). The account lock is held, so no other job of
 * the account writes its health meanwhile.
 */
export async function applyHealth(deps: JobDeps, run: RunForSend, plan: HealthPlan, written: boolean): Promise<{ until: number; reason: string } | null> {
  const at = new Date(deps.clock.now());
  if (plan.kind === 'write' && !written) await deps.cooling.recordHealth(run.account.id, plan.write, at);
  if (plan.kind !== 'cool') return null;
  const { until, reason, ms, paceFactor } = plan;
  const cooled = await deps.cooling.cool(run.account.id, { since: at, until: new Date(until), reason, ms, paceFactor, paceSince: new Date(until) }, at);
  if (!cooled) return null;
  deps.events.emit('account:cooling', { accountId: run.account.id, platform: run.account.platform, reason, until, paceFactor, words: coolingWords(reason, deps.settings.cooling) });
  return { until, reason };
}
