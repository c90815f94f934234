import { accountAdvice } from './account-advice.js';
import { isAlwaysOpen, placeInWindow } from './delivery-window.js';
import { limitsOfPhase, withFit } from './limits.js';
import { NEW_CHAT_HOLD_CODES } from './new-chat-limits.js';
import { isRunStatusIn, OPEN_RUN_STATUSES } from './run-statuses.js';
import type { HoldGroup, RunFacts, TargetHold, Waiting } from './run-facts.js';
import { windowBottleneck } from './window-bottleneck.js';
import { chats, intervalWords, localTime } from './waiting-words.js';

export type { HoldGroup, RunFacts, TargetHold, Waiting, WaitingReason } from './run-facts.js';

/**
 * Error codes the transports give a `chat-wait` (only that chat waits): the HTTP platform's
 * `slow_mode` and Telegram's per-group `chat_flood_wait`. Kept in step with libs/transports.
 */
export const CHAT_WAIT_CODES: readonly string[] = ['slow_mode', 'chat_flood_wait'];

/**
 * What holds a pending target whose next attempt lies ahead, from what the sender wrote on it:
 * a chat-wait code → slow mode; attempts counted → a retry after an error; another code with no
 * attempt counted → the account's wait (the sender puts targets back under an account wait
 * without counting an attempt); no code and no attempt → the interval gate, the only writer of
 * a later `next_attempt_at` on an untried target (migrations/0002 `interval_gate`).
 * The SQL in libs/db (run-waiting-repository) counts holds by the same rules.
 */
export function targetHold(t: { attempts: number; errorCode: string | null }): TargetHold {
  if (t.errorCode !== null && NEW_CHAT_HOLD_CODES.includes(t.errorCode)) return 'new_chat_limit';
  if (t.errorCode !== null && CHAT_WAIT_CODES.includes(t.errorCode)) return 'slow_mode';
  if (t.attempts > 0) return 'retry_backoff';
  if (t.errorCode !== null) return 'flood_wait';
  return 'interval_gate';
}

/**
 * Why the run is where it is, or null when nothing holds it (it is sending, or finished, or an
 * operator paused it: `pausedReason` says so). Precedence, first match wins; the holds of the
 * whole run come first, because while one lasts no chat moves, whatever holds it besides:
 * paused runs: window_closed, account_unavailable (as paused);
 * open runs: scheduled → the `run` limits (cooling) → account_unavailable → window_closed →
 * flood_wait → (chats due now) account_busy → the `due` limits (cap → pace; limits.ts) → queue;
 * (no chat due) the hold that frees a chat first, among interval_gate, retry_backoff, slow_mode
 * and flood_wait (ties in that order).
 */
export function explainRun(f: RunFacts, now: Date): Waiting | null {
  const t = now.getTime();
  const at = (d: Date) => localTime(d, f.timezone, now);
  if (f.status === 'paused') return explainPaused(f, now);
  if (!isRunStatusIn(f.status, OPEN_RUN_STATUSES)) return null;
  if (f.scheduledAt.getTime() > t) {
    return { reason: 'scheduled', until: f.scheduledAt, detail: `Scheduled for ${at(f.scheduledAt)} (${f.timezone}); ${chats(f.pending)} to send.` };
  }
  for (const limit of limitsOfPhase('run')) {
    const held = limit.explain!(f, now);
    if (held) return held;
  }
  if (f.account.status !== 'active') {
    return { reason: 'account_unavailable', until: null, detail: accountAdvice(f.account.platform, f.account.id, f.account.status) };
  }
  const proxy = proxyFailed(f, now);
  if (proxy) return proxy;
  const closed = windowClosed(f, now);
  if (closed) return closed;
  const blocked = f.account.blockedUntil;
  if (blocked && blocked.getTime() > t) {
    return {
      reason: 'flood_wait',
      until: blocked,
      detail: withFit(f, now, `The platform told the account to wait until ${at(blocked)}; ${chats(f.pending)} to send.`),
    };
  }
  if (f.pending === 0) return null;
  if (f.due > 0) {
    if (f.accountBusy && f.inFlight === 0) {
      return { reason: 'account_busy', until: null, detail: `Another run of this account is sending; runs on one account take turns. ${chats(f.due)} due.` };
    }
    for (const limit of limitsOfPhase('due')) {
      const held = limit.explain!(f, now);
      if (held) return held;
    }
    if (f.inFlight > 0) return null;
    const since = f.dueSince && f.dueSince.getTime() > 0 ? ` since ${at(f.dueSince)}` : '';
    return { reason: 'queue', until: null, detail: `${chats(f.due)} due${since}, waiting for a free sender.` };
  }
  return explainHolds(f, now);
}

/**
 * A paused run waits for the window (and the operator, unless auto-resume) or for its account.
 * A window-paused run's sentence ends with the bottleneck of the opening that closed.
 */
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

/**
 * The account's proxy refused or failed (docs/platforms.md, "Proxy"): nothing goes out until it
 * connects again. The sender tries again when the wait it set ends; a new proxy (PATCH) is tried then.
 */
function proxyFailed(f: RunFacts, now: Date): Waiting | null {
  const failure = f.account.proxyFailure;
  if (!failure) return null;
  const blocked = f.account.blockedUntil;
  const until = blocked && blocked.getTime() > now.getTime() ? blocked : null;
  const again = until ? `it is tried again at ${localTime(until, f.timezone, now)}` : 'it is tried again at the next send';
  return {
    reason: 'proxy_failed',
    until,
    detail: `The account's proxy failed: ${failure}. Nothing is sent until it connects; ${again}, or give the account a working proxy (PATCH /v1/accounts/${f.account.id} {"proxy": "…"}, or null for none). ${chats(f.pending)} to send.`,
  };
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

const HOLD_ORDER: TargetHold[] = ['interval_gate', 'retry_backoff', 'slow_mode', 'flood_wait', 'new_chat_limit'];

/** No chat is due: the run waits for the hold that frees a chat first. */
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

/** "12 chats held until 02:48 by the 5-minute interval", one sentence per kind of hold. */
export function holdSentence(
  kind: TargetHold,
  g: HoldGroup,
  f: Pick<RunFacts, 'timezone' | 'everySeconds'> & { account?: Pick<RunFacts['account'], 'newChatHold'> },
  now: Date,
): string {
  const first = localTime(g.first, f.timezone, now);
  const last = localTime(g.last, f.timezone, now);
  const until = first === last ? `until ${first}` : `from ${first} to ${last}`;
  const held = `${chats(g.count)} held ${until}`;
  switch (kind) {
    case 'interval_gate':
      return `${held} by the ${f.everySeconds ? intervalWords(f.everySeconds) : "campaign's"} interval since their last delivery.`;
    case 'retry_backoff':
      return `${held}, waiting to retry after an error.`;
    case 'slow_mode':
      return `${held} by the chats' slow mode.`;
    case 'flood_wait':
      return `${held} by the platform's wait on the account.`;
    case 'new_chat_limit': {
      const hold = f.account?.newChatHold;
      if (!hold) return `${held}: new chats the platform held; they are tried again then.`;
      return hold.until ? `${held}. ${hold.words}` : `${chats(g.count)} held. ${hold.words}`;
    }
  }
}

/**
 * One pending target's hold: its own, or the run's when that stops every chat (scheduled, window,
 * account) and ends later or at an unknown time. A due target waits for what the run waits for.
 */
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

// The holds of the whole run; the others (pace, queue, account_busy, and the run's account of
// its chats' own holds) only concern the chats that are due.
function stopsEveryChat(run: Waiting, f: Pick<RunFacts, 'account'>, now: Date): boolean {
  if (run.reason === 'scheduled' || run.reason === 'window_closed' || run.reason === 'account_unavailable' || run.reason === 'proxy_failed') return true;
  if (limitsOfPhase('run').some((l) => l.waiting === run.reason)) return true;
  return run.reason === 'flood_wait' && (f.account.blockedUntil?.getTime() ?? 0) > now.getTime();
}
