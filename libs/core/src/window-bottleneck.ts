import { formatLocalTime, isAlwaysOpen, windowAt, type DeliveryWindow } from './delivery-window.js';
import type { RunCountsLike } from './types.js';
import { chats, paceWords } from './waiting-words.js';

export interface WindowRunPace {
  perMinute: number;
  partsPerChat: number;
  scheduledAt: Date;
  firstSendAt: Date | null;
  window: DeliveryWindow;
  windowEndAt: Date;
}

/**
 * The sentence a window-paused summary ends with: the sends a minute the run needed against the account's pace (the pace or waits limited it);
 * a run resumed from an earlier opening says what its pending chats need instead.
 */
export function windowBottleneck(counts: RunCountsLike, p: WindowRunPace, timezone: string): string {
  const parts = Math.max(1, p.partsPerChat);
  const close = p.windowEndAt.getTime();
  const opening = isAlwaysOpen(p.window) ? -Infinity : windowAt(new Date(close - 1), p.window, timezone).start.getTime();
  const began = (p.firstSendAt ?? p.scheduledAt).getTime();
  const pace = paceWords(p.perMinute, parts);
  if (began < opening) {
    const left = counts.pending + counts.inFlight;
    return `The ${chats(left)} still pending need about ${Math.ceil((left * parts) / p.perMinute)} min at the account's pace of ${pace}.`;
  }
  const from = Math.max(began, p.scheduledAt.getTime(), opening);
  const minutes = (close - from) / 60_000;
  const closedAt = formatLocalTime(p.windowEndAt, timezone);
  if (minutes <= 0) return `It could not start before the window closed at ${closedAt}.`;
  const reach = counts.total - counts.skipped;
  const span = `for ${chats(reach)} from ${formatLocalTime(new Date(from), timezone)} to ${closedAt}`;
  const needed = Math.ceil((reach * parts) / minutes);
  if (needed > p.perMinute) return `Bottleneck: it needed ${needed}${parts > 1 ? ' sends' : ''}/min ${span}; the account is paced at ${pace}.`;
  return `The account's pace of ${pace} was enough ${span}; the time went to waits (the platform's flood waits, slow mode, retries, or another run of the account).`;
}
