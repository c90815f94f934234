import { limit, withFit } from './limit-entry.js';
import { slotIntervalMs } from './run-eta.js';
import { chats, localTime, paceWords } from './waiting-words.js';

// The limits the gate reserves in Redis with each send (lua/pace-reserve-3, pace-reserve-safe-6).

/** When a GCRA with `burst` next lets a send go: lua/include/gcra.lua `pace_waits`, the same sum. */
export function gcraFreeAt(tat: number, intervalMs: number, burst: number): number {
  return tat === 0 ? 0 : tat - (burst - 1) * intervalMs;
}

/** An hourly or daily cap met: the job ends until its window frees a slot (CAP_MET). */
export const CAP = limit({
  key: 'cap',
  waiting: 'cap',
  gate: 'job',
  phase: 'due',
  fact: 'capFreeAt',
  freeAt: (s) => s.capFreeAt,
  explain: (f, now) => {
    if (!f.capFreeAt || f.capFreeAt.getTime() <= now.getTime()) return null;
    const words = `The account sent as many as its hourly or daily cap allows; its next send is at ${localTime(f.capFreeAt, f.timezone, now)}, with ${chats(f.pending)} to send.`;
    return { reason: 'cap', until: f.capFreeAt, detail: withFit(f, now, words) };
  },
});

/** The warm-up lowers the daily cap (gateLimits): met as the cap. */
export const WARMUP = limit({ key: 'warmup', waiting: 'cap', gate: null, phase: null });

/** The human gap (sendDelaySeconds): the account's next send waits for it in Redis, apart from the GCRA. */
export const HUMAN_GAP = limit({
  key: 'human_gap',
  waiting: 'pace',
  gate: 'job',
  phase: 'due',
  fact: 'gapFreeAt',
  freeAt: (s) => s.gapAt,
  explain: (f, now) => {
    const at = f.gapFreeAt;
    if (!at || at.getTime() <= now.getTime()) return null;
    const words = `${chats(f.pending)} to send; the account's human gap between sends holds the next one until ${localTime(at, f.timezone, now, true)}.`;
    return { reason: 'pace', until: at, detail: withFit(f, now, words) };
  },
});

/** The account's pace: a GCRA of RATE_BURST sends back to back, reserved 2 % slower than configured. */
export const PACE = limit({
  key: 'pace',
  waiting: 'pace',
  gate: 'job',
  phase: 'due',
  fact: 'paceFreeAt',
  freeAt: (s, p) => gcraFreeAt(s.paceTat, slotIntervalMs(p.perMinute), p.burst),
  explain: (f, now) => {
    if (!f.paceFreeAt || f.paceFreeAt.getTime() <= now.getTime()) return null;
    const words = `${chats(f.pending)} to send at the account's pace of ${paceWords(f.account.perMinute, f.partsPerChat)}; next slot at ${localTime(f.paceFreeAt, f.timezone, now, true)}.`;
    return { reason: 'pace', until: f.paceFreeAt, detail: withFit(f, now, words) };
  },
});

/** A platform's pace per chat (CHAT_PACE_PER_MINUTE): only that chat waits. */
export const CHAT_PACE = limit<'chat_pace', never>({ key: 'chat_pace', waiting: null, gate: 'chat', phase: null });
