import {
  chatWindows,
  gateLimit,
  gateLimits,
  gcraFreeAt,
  HOLD_CLASSES,
  holdCode,
  LIMIT_SETTINGS,
  LIMITS,
  limitFreeTimes,
  limitsOfPhase,
  WAITING_REASONS,
} from './limits.js';
import { at, factsFrom, NOW } from './run-facts.fixture.js';
import { explainRun, explainTarget, targetHold } from './run-waiting.js';

// The list of limits is what both the gate and the `waiting` explanation read: each answer
// below comes from one entry of LIMITS.
const facts = factsFrom();

describe('the list of limits', () => {
  it('names each limit once, and every limit the explanation places has its sentence', () => {
    const keys = LIMITS.map((l) => l.key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const l of LIMITS) if (l.phase !== null) expect(typeof l.explain).toBe('function');
    expect(limitsOfPhase('run').map((l) => l.key)).toEqual(['cooling']);
    expect(limitsOfPhase('connection').map((l) => l.key)).toEqual(['proxy']);
    expect(limitsOfPhase('platform').map((l) => l.key)).toEqual(['flood_wait']);
    expect(limitsOfPhase('due').map((l) => l.key)).toEqual(['cap', 'human_gap', 'pace']);
  });

  it('gives the contract its reasons in their order, and each coded hold its limit', () => {
    expect(WAITING_REASONS.slice(0, 4)).toEqual(['scheduled', 'window_closed', 'interval_gate', 'pace']);
    expect(new Set(WAITING_REASONS).size).toBe(WAITING_REASONS.length);
    expect(HOLD_CLASSES.map((c) => c.kind)).toEqual(['slow_mode', 'new_chat_limit', 'chat_cap']);
    expect(holdCode('new_chat_limit')).toBe('new_chats_refused');
    expect(holdCode('pace')).toBeNull();
  });

  it('reads free times from Redis as the pace script computes them: the burst lets B sends through, the human gap apart', () => {
    const t = NOW.getTime();
    // 6/min reserved 2 % slower: 10,200 ms a slot; a TAT three slots ahead with a burst of 3 is one slot away
    expect(gcraFreeAt(t + 30_600, 10_200, 3)).toBe(t + 10_200);
    expect(gcraFreeAt(t + 30_600, 10_200, 1)).toBe(t + 30_600);
    const state = { paceTat: t + 20_400, gapAt: t + 4_000, capFreeAt: 0, locked: true };
    expect(limitFreeTimes(state, { perMinute: 6, burst: 3 }, NOW)).toEqual({ paceFreeAt: null, gapFreeAt: new Date(t + 4_000), capFreeAt: null });
    expect(limitFreeTimes(state, { perMinute: 6, burst: 1 }, NOW).paceFreeAt).toEqual(new Date(t + 20_400));
  });

  it('explains chats due by the due limit that frees last: the human gap after the pace, or the pace after the gap', () => {
    const gapLater = explainRun(facts({ paceFreeAt: at('03:00:02'), gapFreeAt: at('03:00:04') }), NOW);
    expect(gapLater).toMatchObject({ reason: 'pace', until: at('03:00:04') });
    expect(gapLater?.detail).toContain('human gap');
    expect(explainRun(facts({ paceFreeAt: at('03:00:10'), gapFreeAt: at('03:00:04') }), NOW)).toMatchObject({ reason: 'pace', until: at('03:00:10') });
  });

  it("reads the pace scripts' limitedBy as a limit: the chat's pace holds one chat, the account's pace and a cap end the job", () => {
    expect(gateLimit('chat')).toMatchObject({ key: 'chat_pace', gate: 'chat' });
    expect(gateLimit('account')).toMatchObject({ key: 'pace', gate: 'job', waiting: 'pace' });
    expect(gateLimit('cap')).toMatchObject({ key: 'cap', gate: 'job', waiting: 'cap' });
  });

  it('gives the gate the human gap and the caps, the daily cap lowered by the warm-up of the day', () => {
    const account = {
      sendDelaySeconds: { min: 30, max: 60 },
      hourlyCap: 40,
      dailyCap: 500,
      warmup: {
        startedAt: '2030-01-15T00:00:00Z',
        steps: [
          { afterDays: 0, dailyCap: 20 },
          { afterDays: 30, dailyCap: null },
        ],
      },
    };
    expect(gateLimits(account, NOW.getTime())).toEqual({ minDelayMs: 30_000, delay: { min: 30, max: 60 }, hourlyCap: 40, dailyCap: 20 });
    expect(gateLimits({ sendDelaySeconds: null, hourlyCap: null, dailyCap: null, warmup: null }, NOW.getTime())).toBeNull();
  });

  it('explains a due run by the first limit of the list that holds it: the cap before the pace', () => {
    const both = facts({ capFreeAt: at('03:20:00'), paceFreeAt: at('03:00:05') });
    expect(explainRun(both, NOW)?.reason).toBe('cap');
    expect(explainRun(facts({ paceFreeAt: at('03:00:05') }), NOW)?.reason).toBe('pace');
  });

  it("holds every chat for a `run` limit: a pending target waits for the account's cooling", () => {
    const f = facts({ account: { status: 'cooling', coolingUntil: at('03:30:00'), coolingReason: 'failures' } });
    const run = explainRun(f, NOW);
    const target = { status: 'pending', attempts: 0, errorCode: null, nextAttemptAt: at('03:10:00') };
    expect(explainTarget(target, run, f, NOW)?.reason).toBe('cooling');
  });
});

describe('chatCap: a per-chat cap across campaigns, one entry', () => {
  it('is an account setting of a count and a day or a week, reserved with each chat as a rolling window', () => {
    expect(LIMIT_SETTINGS.map((x) => x.field)).toEqual(['chatCap']);
    expect(chatWindows({ limits: { chatCap: { count: 2, per: 'day' } } })).toEqual([{ key: 'chat_cap', count: 2, windowMs: 86_400_000 }]);
    expect(chatWindows({ limits: { chatCap: { count: 5, per: 'week' } } })).toEqual([{ key: 'chat_cap', count: 5, windowMs: 7 * 86_400_000 }]);
    expect(chatWindows({ limits: {} })).toEqual([]);
    expect(chatWindows({})).toEqual([]);
  });

  it('holds only its chat: the gate puts the target back with code chat_cap, and waiting says chat_cap', () => {
    expect(gateLimit('chat_cap')).toMatchObject({ key: 'chat_cap', gate: 'chat', waiting: 'chat_cap' });
    expect(holdCode('chat_cap')).toBe('chat_cap');
    expect(targetHold({ attempts: 0, errorCode: 'chat_cap' })).toBe('chat_cap');
    const f = facts({ due: 0, pending: 3, holds: { chat_cap: { count: 3, first: at('04:00:00'), last: at('05:00:00') } } });
    expect(explainRun(f, NOW)).toEqual({
      reason: 'chat_cap',
      until: at('04:00:00'),
      detail: "3 chats held from 12:00 to 13:00 by the account's cap on messages to one chat (chatCap), whichever campaign sends.",
    });
    const target = { status: 'pending', attempts: 0, errorCode: 'chat_cap', nextAttemptAt: at('04:00:00') };
    expect(explainTarget(target, null, f, NOW)).toMatchObject({ reason: 'chat_cap', until: at('04:00:00') });
  });
});
