import { isAlwaysOpen, placeInWindow } from './delivery-window.js';
import { isRunStatusIn, OPEN_RUN_STATUSES } from './run-statuses.js';
import type { RunFacts } from './run-facts.js';
import { pacedPerMinute } from './send-pace.js';

type EtaFacts = Pick<
  RunFacts,
  'status' | 'scheduledAt' | 'windowEndAt' | 'timezone' | 'window' | 'partsPerChat' | 'account' | 'pending' | 'inFlight' | 'holds' | 'paceFreeAt' | 'gapFreeAt'
>;

export function slotIntervalMs(perMinute: number): number {
  return 60_000 / pacedPerMinute(perMinute);
}

export function earliestSend(f: EtaFacts, now: Date): number {
  const times = [now.getTime(), f.scheduledAt.getTime(), f.account.blockedUntil?.getTime() ?? 0, f.paceFreeAt?.getTime() ?? 0, f.gapFreeAt?.getTime() ?? 0];
  if (!isAlwaysOpen(f.window)) times.push(placeInWindow(now, f.window, f.timezone).startAt.getTime());
  return Math.max(...times);
}

/**
 * When the run is expected to finish: one pace slot per part left from its earliest send, not before its last held chat is free. Null when it is
 * not sending or cannot finish before its window closes. Platform latency, errors and waits yet to come are not known ahead.
 */
export function runEta(f: EtaFacts, now: Date): Date | null {
  if (!isRunStatusIn(f.status, OPEN_RUN_STATUSES)) return null;
  if (f.account.status !== 'active') return null;
  const left = f.pending + f.inFlight;
  const start = earliestSend(f, now);
  const end = f.windowEndAt?.getTime() ?? Infinity;
  if (left === 0) return now;
  if (start >= end) return null;
  const sends = left * Math.max(1, f.partsPerChat);
  let finish = start + (sends - 1) * slotIntervalMs(f.account.perMinute);
  for (const g of Object.values(f.holds)) if (g && g.count > 0) finish = Math.max(finish, g.last.getTime());
  return finish < end ? new Date(finish) : null;
}

export function chatsThatFit(f: EtaFacts, now: Date): number {
  const left = f.pending + f.inFlight;
  if (!f.windowEndAt) return left;
  const span = f.windowEndAt.getTime() - earliestSend(f, now);
  if (span <= 0) return 0;
  const slots = Math.floor(span / slotIntervalMs(f.account.perMinute)) + 1;
  return Math.min(left, Math.floor(slots / Math.max(1, f.partsPerChat)));
}
