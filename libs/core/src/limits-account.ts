import { COOLING_NOT_DELIVERING, COOLING_RESTRICTED, restrictionWords } from './cooling.js';
import { capitalise, type Held, limit, withFit } from './limit-entry.js';
import type { RunFacts } from './run-facts.js';
import { chats, localTime } from './waiting-words.js';

// The limits that stop every chat of the account: cooling, a failed proxy, the platform's wait.

/** Automatic cooling: nothing is sent until it ends (the sender checks it before the lock, libs/core decideJobStart). */
export const COOLING = limit({ key: 'cooling', waiting: 'cooling', gate: null, phase: 'run', explain: explainCooling });

/** The account's proxy refused or failed (docs/platforms.md, "Proxy"): tried again when the wait the sender set ends. */
export const PROXY = limit({ key: 'proxy', waiting: 'proxy_failed', gate: null, phase: 'connection', explain: explainProxy });

/** The platform's wait on the account (accounts.blocked_until, from a flood wait); a chat put back under it counts no attempt. */
export const FLOOD_WAIT = limit({
  key: 'flood_wait',
  waiting: 'flood_wait',
  gate: null,
  phase: 'platform',
  hold: { codes: [], sentence: (held) => `${held} by the platform's wait on the account.` },
  explain: (f, now) => {
    const blocked = f.account.blockedUntil;
    if (!blocked || blocked.getTime() <= now.getTime()) return null;
    const words = `The platform told the account to wait until ${localTime(blocked, f.timezone, now)}; ${chats(f.pending)} to send.`;
    return { reason: 'flood_wait', until: blocked, detail: withFit(f, now, words) };
  },
});

function explainCooling(f: RunFacts, now: Date): Held<'cooling'> | null {
  if (f.account.status !== 'cooling') return null;
  const until = f.account.coolingUntil ?? null;
  if (f.account.coolingReason === COOLING_RESTRICTED) {
    const words = capitalise(restrictionWords(f.account.restrictedBecause, f.account.platform));
    return { reason: 'cooling', until: null, detail: `${words}; ${chats(f.pending)} to send, and the run waits until an operator lifts the restriction.` };
  }
  if (f.account.coolingReason === COOLING_NOT_DELIVERING) {
    return {
      reason: 'cooling',
      until: null,
      detail: `The account is not delivering: none of its last sends got a delivery receipt; ${chats(f.pending)} to send, and the run waits until receipts come again or an operator lifts it.`,
    };
  }
  const why =
    f.account.coolingReason === 'flood_waits'
      ? ' after the platform made it wait too often'
      : f.account.coolingReason === 'failures'
        ? ' after too many of its sends failed'
        : '';
  const when = until ? ` until ${localTime(until, f.timezone, now)} (${f.timezone})` : '';
  const closesFirst = until && f.windowEndAt && f.windowEndAt.getTime() <= until.getTime();
  const then = closesFirst ? 'the delivery window closes first, so the run pauses' : 'the run goes on by itself then';
  return { reason: 'cooling', until, detail: `The account is cooling${when}${why}; ${chats(f.pending)} to send, ${then}.` };
}

function explainProxy(f: RunFacts, now: Date): Held<'proxy_failed'> | null {
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
