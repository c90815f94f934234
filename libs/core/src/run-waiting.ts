import { accountAdvice } from './account-advice.js';
import { isAlwaysOpen, placeInWindow } from './delivery-window.js';
import type { HoldFacts } from './limit-entry.js';
import { HOLD_CLASSES, LIMITS, limitsOfPhase, withFit, type TargetHold, type Waiting } from './limits.js';
import { isRunStatusIn, OPEN_RUN_STATUSES } from './run-statuses.js';
import type { HoldGroup, RunFacts } from './run-facts.js';
import { windowBottleneck } from './window-bottleneck.js';
import { chats, intervalWords, localTime } from './waiting-words.js';

export type { HoldGroup, RunFacts } from './run-facts.js';
export type { TargetHold, Waiting, WaitingReason } from './limits.js';

/** A held target's kind: a limit's hold code, else retry (attempts), flood wait (a code), interval gate; libs/db counts alike. */
export function targetHold(t: { attempts: number; errorCode: string | null }): TargetHold {
  const coded = t.errorCode === null ? undefined : HOLD_CLASSES.find((c) => c.codes.includes(t.errorCode!));
  if (coded) return coded.kind;
  if (t.attempts > 0) return 'retry_backoff';
  if (t.errorCode !== null) return 'flood_wait';
  return 'interval_gate';
}

/**
 * Why the run waits, or null; first match wins: (paused) window, account; scheduled → `run` limits → account_unavailable →
 * `connection` limits → window → `platform` limits → (due) account_busy → the `due` limit freeing last → queue; else the first hold to free.
 */
export function explainRun(f: RunFacts, now: Date): Waiting | null {
  const t = now.getTime();
  const at = (d: Date) => localTime(d, f.timezone, now);
  if (f.status === 'paused') return explainPaused(f, now);
  if (!isRunStatusIn(f.status, OPEN_RUN_STATUSES)) return null;
  if (f.scheduledAt.getTime() > t) {
    return { reason: 'scheduled', until: f.scheduledAt, detail: `Scheduled for ${at(f.scheduledAt)} (${f.timezone}); ${chats(f.pending)} to send.` };
  }
  const stopped = firstHeld('run', f, now);
  if (stopped) return stopped;
  if (f.account.status !== 'active') {
    return { reason: 'account_unavailable', until: null, detail: accountAdvice(f.account.platform, f.account.id, f.account.status) };
  }
  const unconnected = firstHeld('connection', f, now);
  if (unconnected) return unconnected;
  const closed = windowClosed(f, now);
  if (closed) return closed;
  const blocked = firstHeld('platform', f, now);
  if (blocked) return blocked;
  if (f.pending === 0) return null;
  if (f.due > 0) {
    if (f.accountBusy && f.inFlight === 0) {
      return { reason: 'account_busy', until: null, detail: `Another run of this account is sending; runs on one account take turns. ${chats(f.due)} due.` };
    }
    const next = lastFreed(f, now);
    if (next) return next;
    if (f.inFlight > 0) return null;
    const since = f.dueSince && f.dueSince.getTime() > 0 ? ` since ${at(f.dueSince)}` : '';
    return { reason: 'queue', until: null, detail: `${chats(f.due)} due${since}, waiting for a free sender.` };
  }
  return explainHolds(f, now);
}

function explainPaused(f: RunFacts, now: Date): Waiting | null {
  if (f.pausedReason === 'window_closed') {
    const opens = placeInWindow(now, f.window, f.timezone).startAt;
    const when = localTime(opens, f.timezone, now);
    const counts = { total: f.total, pending: f.pending, inFlight: f.inFlight, sent: 0, failed: 0, skipped: f.skipped, unknown: 0 };
    const pace = { perMinute: f.account.perMinute, partsPerChat: f.partsPerChat, scheduledAt: f.scheduledAt, firstSendAt: f.firstSendAt, window: f.window };
    const bottleneck = f.windowEndAt ? ` ${windowBottleneck(counts, { ...pace, windowEndAt: f.windowEndAt }, f.timezone)}` : '';
    return f.autoResume
      ? {
          reason: 'window_closed',
          until: opens,
          detail: `Paused at the window's close; it resumes by itself when the window opens at ${when} (${f.timezone}), with ${chats(f.pending)} pending.${bottleneck}`,
        }
      : {
          reason: 'window_closed',
          until: null,
          detail: `Paused at the window's close with ${chats(f.pending)} pending; resume it to continue (the window opens at ${when}, ${f.timezone}).${bottleneck}`,
        };
  }
  if (f.pausedReason === 'account_unavailable') {
    const detail =
      f.account.status === 'active'
        ? `Paused while the account was unavailable; it is active again: resume to send the ${chats(f.pending)} pending.`
        : accountAdvice(f.account.platform, f.account.id, f.account.status);
    return { reason: 'account_unavailable', until: null, detail };
  }
  return null;
}

function firstHeld(phase: 'run' | 'connection' | 'platform', f: RunFacts, now: Date): Waiting | null {
  for (const limit of limitsOfPhase(phase)) {
    const held = limit.explain?.(f, now);
    if (held) return held;
  }
  return null;
}

/** Chats are due: the next send waits for every `due` limit, so the one that frees last explains it (ties: LIMITS' order). */
function lastFreed(f: RunFacts, now: Date): Waiting | null {
  let last: Waiting | null = null;
  for (const limit of limitsOfPhase('due')) {
    const held = limit.explain?.(f, now);
    if (held && (!last || (held.until?.getTime() ?? Infinity) > (last.until?.getTime() ?? Infinity))) last = held;
  }
  return last;
}

function windowClosed(f: RunFacts, now: Date): Waiting | null {
  if (isAlwaysOpen(f.window)) return null;
  const t = now.getTime();
  if (f.windowEndAt && f.windowEndAt.getTime() <= t) {
    return {
      reason: 'window_closed',
      until: null,
      detail: `The delivery window closed at ${localTime(f.windowEndAt, f.timezone, now)} (${f.timezone}); the run pauses with ${chats(f.pending)} pending.`,
    };
  }
  const opens = placeInWindow(now, f.window, f.timezone).startAt;
  if (opens.getTime() <= t) return null;
  return {
    reason: 'window_closed',
    until: opens,
    detail: `Waiting for the delivery window to open at ${localTime(opens, f.timezone, now)} (${f.timezone}); ${chats(f.pending)} to send.`,
  };
}

const HOLD_ORDER: TargetHold[] = ['interval_gate', 'retry_backoff', ...LIMITS.flatMap((l) => (l.hold && l.waiting ? [l.waiting as TargetHold] : []))];

function explainHolds(f: RunFacts, now: Date): Waiting | null {
  let best: TargetHold | null = null;
  for (const kind of HOLD_ORDER) {
    const g = f.holds[kind];
    if (g && g.count > 0 && (best === null || g.first.getTime() < f.holds[best]!.first.getTime())) best = kind;
  }
  if (best === null) return null;
  const g = f.holds[best]!;
  // a hold with no end set (a 463) is looked at again now and then: its `first` is no end
  const until = best === 'new_chat_limit' && f.account.newChatHold?.until === null ? null : g.first;
  return { reason: best, until, detail: withFit(f, now, holdSentence(best, g, f, now)) };
}

export function holdSentence(kind: TargetHold, g: HoldGroup, f: HoldFacts, now: Date): string {
  const first = localTime(g.first, f.timezone, now);
  const last = localTime(g.last, f.timezone, now);
  const held = `${chats(g.count)} held ${first === last ? `until ${first}` : `from ${first} to ${last}`}`;
  if (kind === 'interval_gate') return `${held} by the ${f.everySeconds ? intervalWords(f.everySeconds) : "campaign's"} interval since their last delivery.`;
  if (kind === 'retry_backoff') return `${held}, waiting to retry after an error.`;
  const limit = LIMITS.find((l) => l.waiting === kind && l.hold);
  return limit?.hold ? limit.hold.sentence(held, f, now) : `${held}.`;
}

/** A pending target's hold: its own, or the run's when that stops every chat and ends later (or unknown). */
export function explainTarget(
  target: { status: string; attempts: number; errorCode: string | null; nextAttemptAt: Date | null },
  run: Waiting | null,
  f: Pick<RunFacts, 'timezone' | 'everySeconds' | 'account'>,
  now: Date,
): Waiting | null {
  if (target.status !== 'pending') return null;
  const next = target.nextAttemptAt;
  const own: Waiting | null =
    next && next.getTime() > now.getTime()
      ? (() => {
          const kind = targetHold(target);
          return { reason: kind, until: next, detail: holdSentence(kind, { count: 1, first: next, last: next }, f, now).replace(/^1 chat held/, 'Held') };
        })()
      : null;
  if (!own) return run;
  if (!run || !stopsEveryChat(run, f, now)) return own;
  if (run.until === null || run.until.getTime() >= own.until!.getTime()) return run;
  return own;
}

function stopsEveryChat(run: Waiting, f: Pick<RunFacts, 'account'>, now: Date): boolean {
  if (run.reason === 'scheduled' || run.reason === 'window_closed' || run.reason === 'account_unavailable') return true;
  if (run.reason === 'flood_wait') return (f.account.blockedUntil?.getTime() ?? 0) > now.getTime();
  return [...limitsOfPhase('run'), ...limitsOfPhase('connection')].some((l) => l.waiting === run.reason);
}
