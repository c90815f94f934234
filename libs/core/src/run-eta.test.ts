import { at, factsFrom, NOW, type FactsPatch } from './run-facts.fixture.js';
import { chatsThatFit, runEta, slotIntervalMs } from './run-eta.js';
import { windowClosedSummary } from './run-state.js';
import { windowBottleneck, type WindowRunPace } from './window-bottleneck.js';

// 40/min reserved 2 % slower: one slot every 1530 ms
const SLOT = 1530;
type Patch = FactsPatch;
const facts = factsFrom({});
const plus = (ms: number, from = NOW) => new Date(from.getTime() + ms);

test('the slot interval is the configured pace reserved 2 % slower', () => {
  expect(slotIntervalMs(40)).toBeCloseTo(SLOT, 6);
});

describe('runEta', () => {
  test.each<[string, Patch, Date | null]>([
    ['12 chats at 40/min from now: the last goes 11 slots on', {}, plus(11 * SLOT)],
    ['a chat in flight counts as one left', { pending: 11, inFlight: 1 }, plus(11 * SLOT)],
    ['two parts a chat: two slots each', { partsPerChat: 2 }, plus(23 * SLOT)],
    ['from the next pace slot', { paceFreeAt: at('03:00:10') }, plus(11 * SLOT, at('03:00:10'))],
    ['from the scheduled time', { status: 'queued', scheduledAt: at('04:00:00') }, plus(11 * SLOT, at('04:00:00'))],
    ["from the end of the account's wait", { account: { blockedUntil: at('03:05:00') } }, plus(11 * SLOT, at('03:05:00'))],
    ['from the window opening (12:00 here)', { status: 'queued', window: { start: '12:00', end: '18:00' } }, plus(11 * SLOT, at('04:00:00'))],
    ['not before the last held chat is free', { holds: { interval_gate: { count: 3, first: at('03:01:00'), last: at('03:04:00') } } }, at('03:04:00')],
    ['a window that never closes', { window: { start: '00:00', end: '24:00' }, windowEndAt: null, pending: 100000 }, plus(99999 * SLOT)],
    ['nothing left: now', { pending: 0, due: 0 }, NOW],
    ['null: cannot finish before the window closes', { pending: 1000, windowEndAt: at('03:10:00') }, null],
    ['null: its window end has passed', { windowEndAt: at('02:59:00') }, null],
    ['null: paused', { status: 'paused', pausedReason: 'operator' }, null],
    ['null: finished', { status: 'success' }, null],
    ['null: the account is unavailable', { account: { status: 'disconnected' } }, null],
  ])('%s', (_name, patch, expected) => {
    expect(runEta(facts(patch), NOW)).toEqual(expected);
  });

  test('chatsThatFit: slots left before the close, per chat', () => {
    expect(chatsThatFit(facts({ pending: 1000, windowEndAt: at('03:10:00') }), NOW)).toBe(Math.floor(600_000 / SLOT) + 1);
    expect(chatsThatFit(facts({ pending: 1000, partsPerChat: 2, windowEndAt: at('03:10:00') }), NOW)).toBe(Math.floor((Math.floor(600_000 / SLOT) + 1) / 2));
    expect(chatsThatFit(facts({ pending: 5, windowEndAt: at('03:10:00') }), NOW)).toBe(5);
    expect(chatsThatFit(facts({ windowEndAt: at('02:00:00') }), NOW)).toBe(0);
  });
});

describe('the window-closed summary names the bottleneck', () => {
  const counts = { total: 1000, pending: 588, inFlight: 0, sent: 412, failed: 0, skipped: 0, unknown: 0 };
  // the window 06:00–18:00 in Kuala Lumpur closed at 18:00 (10:00 UTC); the run started at 17:42
  const pace: WindowRunPace = {
    perMinute: 40,
    partsPerChat: 1,
    scheduledAt: at('09:42:00'),
    firstSendAt: at('09:42:00'),
    window: { start: '06:00', end: '18:00' },
    windowEndAt: at('10:00:00'),
  };
  test.each<[string, Partial<WindowRunPace>, typeof counts, string]>([
    ['the pace was the bottleneck', {}, counts, 'Bottleneck: it needed 56/min for 1000 chats from 17:42 to 18:00; the account is paced at 40/min.'],
    [
      'skipped chats are not counted',
      {},
      { ...counts, skipped: 100, pending: 488 },
      'Bottleneck: it needed 50/min for 900 chats from 17:42 to 18:00; the account is paced at 40/min.',
    ],
    [
      'several parts a chat',
      { partsPerChat: 2 },
      counts,
      'Bottleneck: it needed 112 sends/min for 1000 chats from 17:42 to 18:00; the account is paced at 40 sends/min (20 chats/min at 2 parts each).',
    ],
    [
      'a run scheduled before the opening starts at the opening',
      { scheduledAt: new Date('2030-01-15T23:00:00Z'), firstSendAt: at('01:00:00') },
      counts,
      "The account's pace of 40/min was enough for 1000 chats from 09:00 to 18:00; the time went to waits (the platform's flood waits, slow mode, retries, or another run of the account).",
    ],
    [
      'resumed from an earlier opening: what its pending chats need',
      { scheduledAt: new Date('2030-01-15T09:00:00Z'), firstSendAt: new Date('2030-01-15T09:00:00Z') },
      counts,
      "The 588 chats still pending need about 15 min at the account's pace of 40/min.",
    ],
    ['no time at all', { scheduledAt: at('10:00:00'), firstSendAt: null }, counts, 'It could not start before the window closed at 18:00.'],
  ])('%s', (_name, patch, c, sentence) => {
    expect(windowBottleneck(c, { ...pace, ...patch }, 'Asia/Kuala_Lumpur')).toBe(sentence);
  });

  test('the summary keeps its CONTRACT §3 text first and adds the bottleneck', () => {
    const plain = windowClosedSummary(counts, '18:00', 'Asia/Kuala_Lumpur');
    expect(plain.startsWith('Delivery window closed at 18:00 (Asia/Kuala_Lumpur). 412 of 1000 groups delivered, 588 still pending.')).toBe(true);
    expect(windowClosedSummary(counts, '18:00', 'Asia/Kuala_Lumpur', pace)).toBe(
      `${plain} Bottleneck: it needed 56/min for 1000 chats from 17:42 to 18:00; the account is paced at 40/min.`,
    );
  });
});
