import { at, factsFrom, NOW, type FactsPatch } from './run-facts.fixture.js';
import { explainRun, explainTarget, targetHold, type Waiting } from './run-waiting.js';

// Every reason a run can wait for, its `until` and its sentence, against one fixed `now`:
// 11:00 in Kuala Lumpur (UTC+8), inside a 06:00–18:00 window that closes at 10:00 UTC.
type Patch = FactsPatch;
const facts = factsFrom({ dueSince: at('02:59:00') });
const nothingDue = { due: 0, dueSince: null };
// paused when the window closed at 18:00 (10:00 UTC): 412 of 1000 chats sent from 17:42
const closedAt1800: Patch = {
  status: 'paused',
  pausedReason: 'window_closed',
  total: 1000,
  pending: 588,
  scheduledAt: at('09:42:00'),
  firstSendAt: at('09:42:00'),
};

const cases: Array<[string, Patch, Date, Waiting | null]> = [
  [
    'scheduled: before scheduledAt',
    { status: 'queued', scheduledAt: at('03:30:00') },
    NOW,
    { reason: 'scheduled', until: at('03:30:00'), detail: 'Scheduled for 11:30 (Asia/Kuala_Lumpur); 12 chats to send.' },
  ],
  [
    'cooling: the account cools, the run goes on by itself at its end (before the window and the flood wait)',
    { account: { status: 'cooling', coolingUntil: at('03:30:00'), coolingReason: 'flood_waits', blockedUntil: at('03:10:00') } },
    NOW,
    {
      reason: 'cooling',
      until: at('03:30:00'),
      detail:
        'The account is cooling until 11:30 (Asia/Kuala_Lumpur) after the platform made it wait too often; 12 chats to send, the run goes on by itself then.',
    },
  ],
  [
    'cooling: the window closes before the cooling ends',
    { windowEndAt: at('03:20:00'), account: { status: 'cooling', coolingUntil: at('03:30:00'), coolingReason: 'failures' } },
    NOW,
    {
      reason: 'cooling',
      until: at('03:30:00'),
      detail:
        'The account is cooling until 11:30 (Asia/Kuala_Lumpur) after too many of its sends failed; 12 chats to send, the delivery window closes first, so the run pauses.',
    },
  ],
  [
    'account_unavailable: the account is not active',
    { account: { status: 'disconnected' } },
    NOW,
    { reason: 'account_unavailable', until: null, detail: 'Account disconnected: reconnect it on its platform, then resume.' },
  ],
  [
    'window_closed: waiting for the next opening',
    { status: 'queued', windowEndAt: new Date('2030-01-17T10:00:00Z') },
    new Date('2030-01-16T11:00:00Z'),
    {
      reason: 'window_closed',
      until: new Date('2030-01-16T22:00:00Z'),
      detail: 'Waiting for the delivery window to open at 17 Jan 06:00 (Asia/Kuala_Lumpur); 12 chats to send.',
    },
  ],
  [
    'window_closed: its window end has passed, the run is about to pause',
    { windowEndAt: at('02:30:00') },
    NOW,
    { reason: 'window_closed', until: null, detail: 'The delivery window closed at 10:30 (Asia/Kuala_Lumpur); the run pauses with 12 chats pending.' },
  ],
  [
    'window_closed: paused at the close, the operator resumes; the pace was the bottleneck',
    { ...closedAt1800 },
    new Date('2030-01-16T11:00:00Z'),
    {
      reason: 'window_closed',
      until: null,
      detail:
        "Paused at the window's close with 588 chats pending; resume it to continue (the window opens at 17 Jan 06:00, Asia/Kuala_Lumpur). Bottleneck: it needed 56/min for 1000 chats from 17:42 to 18:00; the account is paced at 40/min.",
    },
  ],
  [
    'window_closed: paused at the close, resumes by itself',
    { ...closedAt1800, autoResume: true },
    new Date('2030-01-16T11:00:00Z'),
    {
      reason: 'window_closed',
      until: new Date('2030-01-16T22:00:00Z'),
      detail:
        "Paused at the window's close; it resumes by itself when the window opens at 17 Jan 06:00 (Asia/Kuala_Lumpur), with 588 chats pending. Bottleneck: it needed 56/min for 1000 chats from 17:42 to 18:00; the account is paced at 40/min.",
    },
  ],
  [
    'account_unavailable: paused for the account, now active again',
    { status: 'paused', pausedReason: 'account_unavailable' },
    NOW,
    {
      reason: 'account_unavailable',
      until: null,
      detail: 'Paused while the account was unavailable; it is active again: resume to send the 12 chats pending.',
    },
  ],
  [
    'account_unavailable: paused, still disconnected (Telegram advice)',
    { status: 'paused', pausedReason: 'account_unavailable', account: { status: 'disconnected', platform: 'telegram' } },
    NOW,
    {
      reason: 'account_unavailable',
      until: null,
      detail: 'Telegram bot disconnected: give it a valid bot token (PATCH /v1/accounts/acc-1 {"credentials":{"botToken":"…"}}), then resume.',
    },
  ],
  [
    'flood_wait: the platform told the account to wait',
    { account: { blockedUntil: at('03:05:00') } },
    NOW,
    { reason: 'flood_wait', until: at('03:05:00'), detail: 'The platform told the account to wait until 11:05; 12 chats to send.' },
  ],
  [
    'proxy_failed: the account waits for its proxy, before the platform wait it set',
    { account: { blockedUntil: at('03:05:00'), proxyFailure: 'socks5://10.0.0.9:1080 refused the connection (ECONNREFUSED)' } },
    NOW,
    {
      reason: 'proxy_failed',
      until: at('03:05:00'),
      detail:
        'The account\'s proxy failed: socks5://10.0.0.9:1080 refused the connection (ECONNREFUSED). Nothing is sent until it connects; it is tried again at 11:05, or give the account a working proxy (PATCH /v1/accounts/acc-1 {"proxy": "…"}, or null for none). 12 chats to send.',
    },
  ],
  [
    'account_busy: another run holds the account',
    { accountBusy: true },
    NOW,
    { reason: 'account_busy', until: null, detail: 'Another run of this account is sending; runs on one account take turns. 12 chats due.' },
  ],
  [
    'pace: chats due, the next slot is ahead',
    { paceFreeAt: at('03:00:01.530'), inFlight: 1 },
    NOW,
    { reason: 'pace', until: at('03:00:01.530'), detail: "12 chats to send at the account's pace of 40/min; next slot at 11:00:01." },
  ],
  [
    'pace: two parts a chat',
    { paceFreeAt: at('03:00:01.530'), partsPerChat: 2 },
    NOW,
    {
      reason: 'pace',
      until: at('03:00:01.530'),
      detail: "12 chats to send at the account's pace of 40 sends/min (20 chats/min at 2 parts each); next slot at 11:00:01.",
    },
  ],
  ['queue: due, nothing holds it, no sender has it', {}, NOW, { reason: 'queue', until: null, detail: '12 chats due since 10:59, waiting for a free sender.' }],
  [
    'interval_gate: every chat held by the interval',
    { ...nothingDue, holds: { interval_gate: { count: 12, first: at('03:04:00'), last: at('03:04:00') } } },
    NOW,
    { reason: 'interval_gate', until: at('03:04:00'), detail: '12 chats held until 11:04 by the 5-minute interval since their last delivery.' },
  ],
  [
    'interval_gate: a cron campaign names no interval length',
    { ...nothingDue, everySeconds: null, holds: { interval_gate: { count: 1, first: at('03:04:00'), last: at('03:04:00') } } },
    NOW,
    { reason: 'interval_gate', until: at('03:04:00'), detail: "1 chat held until 11:04 by the campaign's interval since their last delivery." },
  ],
  [
    'retry_backoff: frees a chat first, before the interval gate',
    {
      ...nothingDue,
      holds: {
        interval_gate: { count: 10, first: at('03:04:00'), last: at('03:05:00') },
        retry_backoff: { count: 2, first: at('03:01:00'), last: at('03:03:00') },
      },
    },
    NOW,
    { reason: 'retry_backoff', until: at('03:01:00'), detail: '2 chats held from 11:01 to 11:03, waiting to retry after an error.' },
  ],
  [
    'slow_mode: chats in slow mode',
    {
      ...nothingDue,
      holds: { slow_mode: { count: 3, first: at('03:02:00'), last: at('03:02:00') }, interval_gate: { count: 9, first: at('03:04:00'), last: at('03:04:00') } },
    },
    NOW,
    { reason: 'slow_mode', until: at('03:02:00'), detail: "3 chats held until 11:02 by the chats' slow mode." },
  ],
  [
    'flood_wait: chats put back under an account wait that the account no longer has',
    { ...nothingDue, holds: { flood_wait: { count: 12, first: at('03:00:30'), last: at('03:00:30') } } },
    NOW,
    { reason: 'flood_wait', until: at('03:00:30'), detail: "12 chats held until 11:00 by the platform's wait on the account." },
  ],
  ['sending: chats due, a free slot, a chat in flight', { inFlight: 2 }, NOW, null],
  ['nothing pending: finishing', { pending: 0, due: 0, inFlight: 1 }, NOW, null],
  ['paused by the operator: pausedReason says it', { status: 'paused', pausedReason: 'operator' }, NOW, null],
  ['finished', { status: 'success', pending: 0, due: 0 }, NOW, null],
  // precedence: the earlier rule wins when several apply
  [
    'scheduled before account_unavailable',
    { status: 'queued', scheduledAt: at('03:30:00'), account: { status: 'disabled' } },
    NOW,
    { reason: 'scheduled', until: at('03:30:00'), detail: 'Scheduled for 11:30 (Asia/Kuala_Lumpur); 12 chats to send.' },
  ],
  [
    'account_unavailable before window_closed',
    { windowEndAt: at('02:30:00'), account: { status: 'disabled' } },
    NOW,
    { reason: 'account_unavailable', until: null, detail: 'Account is disabled: enable it (PATCH /v1/accounts/acc-1 {"status":"active"}), then resume.' },
  ],
  [
    'window_closed before flood_wait',
    { windowEndAt: at('02:30:00'), account: { blockedUntil: at('03:05:00') } },
    NOW,
    { reason: 'window_closed', until: null, detail: 'The delivery window closed at 10:30 (Asia/Kuala_Lumpur); the run pauses with 12 chats pending.' },
  ],
  [
    'flood_wait before account_busy and pace',
    { accountBusy: true, paceFreeAt: at('03:00:05'), account: { blockedUntil: at('03:05:00') } },
    NOW,
    { reason: 'flood_wait', until: at('03:05:00'), detail: 'The platform told the account to wait until 11:05; 12 chats to send.' },
  ],
  [
    'cap: the hourly or daily cap is met, before pace',
    { capFreeAt: at('03:40:00'), paceFreeAt: at('03:00:05') },
    NOW,
    {
      reason: 'cap',
      until: at('03:40:00'),
      detail: 'The account sent as many as its hourly or daily cap allows; its next send is at 11:40, with 12 chats to send.',
    },
  ],
  ['a cap that freed holds nothing', { capFreeAt: at('02:59:00') }, NOW, { reason: 'queue', until: null, detail: expect.any(String) }],
  [
    'account_busy before pace',
    { accountBusy: true, paceFreeAt: at('03:00:05') },
    NOW,
    { reason: 'account_busy', until: null, detail: 'Another run of this account is sending; runs on one account take turns. 12 chats due.' },
  ],
  [
    'a chat due now comes before held chats',
    { due: 2, holds: { interval_gate: { count: 10, first: at('03:04:00'), last: at('03:04:00') } } },
    NOW,
    { reason: 'queue', until: null, detail: '2 chats due since 10:59, waiting for a free sender.' },
  ],
];

describe('explainRun: every reason, its until and its sentence', () => {
  test.each(cases)('%s', (_name, patch, now, expected) => {
    expect(explainRun(facts(patch), now)).toEqual(expected);
  });

  test('a run that cannot finish inside its window says how many chats fit', () => {
    const w = explainRun(facts({ pending: 1000, due: 1000, windowEndAt: at('03:10:00'), paceFreeAt: at('03:00:01') }), NOW);
    expect(w).toEqual({
      reason: 'pace',
      until: at('03:00:01'),
      detail:
        "1000 chats to send at the account's pace of 40/min; next slot at 11:00:01; about 392 of the 1000 chats left fit before the window closes at 11:10.",
    });
  });
});

describe("new_chat_limit: WhatsApp holds the account's new chats", () => {
  const held = { ...nothingDue, holds: { new_chat_limit: { count: 3, first: at('03:10:00'), last: at('03:10:00') } } };
  test('a reach-out time lock: until its end, with its words', () => {
    const hold = { code: 'reachout_time_lock', until: at('03:10:00'), words: 'WhatsApp locked the account out of new chats.' };
    expect(explainRun(facts({ ...held, account: { platform: 'whatsapp', newChatHold: hold } }), NOW)).toEqual({
      reason: 'new_chat_limit',
      until: at('03:10:00'),
      detail: '3 chats held until 11:10. WhatsApp locked the account out of new chats.',
    });
  });
  test('a 463: no end (the recheck time is not one), until an operator lifts it', () => {
    const hold = { code: 'new_chats_refused', until: null, words: 'WhatsApp refused a message to a new chat.' };
    expect(explainRun(facts({ ...held, account: { platform: 'whatsapp', newChatHold: hold } }), NOW)).toEqual({
      reason: 'new_chat_limit',
      until: null,
      detail: '3 chats held. WhatsApp refused a message to a new chat.',
    });
  });
});

describe('targetHold: what holds a pending target, from what the sender wrote on it', () => {
  test.each([
    [{ attempts: 0, errorCode: null }, 'interval_gate'],
    [{ attempts: 2, errorCode: 'http_503' }, 'retry_backoff'],
    [{ attempts: 0, errorCode: 'slow_mode' }, 'slow_mode'],
    [{ attempts: 3, errorCode: 'chat_flood_wait' }, 'slow_mode'],
    [{ attempts: 0, errorCode: 'flood_wait' }, 'flood_wait'],
    [{ attempts: 0, errorCode: 'rate_overlimit' }, 'flood_wait'],
    [{ attempts: 0, errorCode: 'new_chats_refused' }, 'new_chat_limit'],
    [{ attempts: 0, errorCode: 'reachout_time_lock' }, 'new_chat_limit'],
    [{ attempts: 1, errorCode: 'new_chat_cap' }, 'new_chat_limit'],
  ] as const)('%j → %s', (target, hold) => {
    expect(targetHold(target)).toBe(hold);
  });
});

describe('explainTarget', () => {
  const f = facts();
  const pending = (p: { attempts?: number; errorCode?: string | null; nextAttemptAt?: Date | null } = {}) => ({
    status: 'pending',
    attempts: 0,
    errorCode: null,
    nextAttemptAt: null,
    ...p,
  });
  const windowShut: Waiting = { reason: 'window_closed', until: at('22:00:00'), detail: 'window' };
  const pace: Waiting = { reason: 'pace', until: at('03:00:02'), detail: 'pace' };

  test('its own hold, with a sentence of its own', () => {
    expect(explainTarget(pending({ nextAttemptAt: at('03:04:00') }), pace, f, NOW)).toEqual({
      reason: 'interval_gate',
      until: at('03:04:00'),
      detail: 'Held until 11:04 by the 5-minute interval since their last delivery.',
    });
    expect(explainTarget(pending({ nextAttemptAt: at('03:02:00'), attempts: 1, errorCode: 'http_500' }), null, f, NOW)).toMatchObject({
      reason: 'retry_backoff',
      until: at('03:02:00'),
    });
    expect(explainTarget(pending({ nextAttemptAt: at('03:02:00'), errorCode: 'slow_mode' }), null, f, NOW)).toMatchObject({ reason: 'slow_mode' });
  });
  test('a due chat waits for what the run waits for', () => {
    expect(explainTarget(pending(), pace, f, NOW)).toBe(pace);
    expect(explainTarget(pending({ nextAttemptAt: at('02:00:00') }), null, f, NOW)).toBeNull();
  });
  test("a hold of the whole run binds the chat unless the chat's own ends later", () => {
    expect(explainTarget(pending({ nextAttemptAt: at('03:04:00') }), windowShut, f, NOW)).toBe(windowShut);
    expect(explainTarget(pending({ nextAttemptAt: new Date('2030-01-17T00:00:00Z') }), windowShut, f, NOW)).toMatchObject({ reason: 'interval_gate' });
    const unavailable: Waiting = { reason: 'account_unavailable', until: null, detail: 'x' };
    expect(explainTarget(pending({ nextAttemptAt: at('03:04:00') }), unavailable, f, NOW)).toBe(unavailable);
    const blocked = facts({ account: { blockedUntil: at('03:05:00') } });
    const flood: Waiting = { reason: 'flood_wait', until: at('03:05:00'), detail: 'flood' };
    expect(explainTarget(pending({ nextAttemptAt: at('03:04:00') }), flood, blocked, NOW)).toBe(flood);
  });
  test("the run's account of its held chats gives way to each chat's own hold", () => {
    const held: Waiting = { reason: 'retry_backoff', until: at('03:01:00'), detail: '2 chats held from 11:01 to 11:03' };
    expect(explainTarget(pending({ nextAttemptAt: at('03:01:00'), attempts: 1, errorCode: 'http_500' }), held, f, NOW)).toEqual({
      reason: 'retry_backoff',
      until: at('03:01:00'),
      detail: 'Held until 11:01, waiting to retry after an error.',
    });
    const flood: Waiting = { reason: 'flood_wait', until: at('03:06:00'), detail: 'held chats' };
    expect(explainTarget(pending({ nextAttemptAt: at('03:02:00'), errorCode: 'slow_mode' }), flood, f, NOW)).toMatchObject({ reason: 'slow_mode' });
  });
  test('only pending targets wait', () => {
    for (const status of ['in_flight', 'sent', 'failed', 'skipped', 'unknown']) expect(explainTarget({ ...pending(), status }, pace, f, NOW)).toBeNull();
  });
});
