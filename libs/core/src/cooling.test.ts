import { appendOutcomes, coolingReason, decideCooling, DEFAULT_COOLING, effectivePerMinute, isFloodWait, paceFactorAt, type AccountHealth } from './cooling.js';

const NOW = Date.parse('2026-03-01T10:00:00Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const s = DEFAULT_COOLING; // K = 3 an hour, X = 20 %, N = 50, 30 min, step 10 % every 10 min

const health = (h: Partial<AccountHealth> = {}): AccountHealth => ({ floodWaits: [], outcomes: '', paceFactor: 1, paceSince: null, lastCooling: null, ...h });
const ago = (...minutes: number[]) => minutes.map((m) => NOW - m * MIN);
const outcomes = (sent: number, failed: number) => 's'.repeat(sent) + 'f'.repeat(failed);

describe('coolingReason', () => {
  it.each([
    ['no waits, no sends', health(), null],
    ['K waits in the hour do not cool', health({ floodWaits: ago(50, 30, 1) }), null],
    ['K + 1 waits in the hour cool', health({ floodWaits: ago(50, 30, 10, 1) }), 'flood_waits'],
    ['waits older than an hour do not count', health({ floodWaits: ago(120, 61, 60, 10, 1) }), null],
    ['a wait exactly an hour old no longer counts', health({ floodWaits: ago(60, 30, 10, 1) }), null],
    ['a failure share above X of the last N cools', health({ outcomes: outcomes(39, 11) }), 'failures'],
    ['exactly X does not', health({ outcomes: outcomes(40, 10) }), null],
    ['not before N sends, however many fail', health({ outcomes: outcomes(0, 49) }), null],
    ['only the last N count', health({ outcomes: outcomes(0, 30) + outcomes(50, 0) }), null],
    ['failures among the last N after older successes', health({ outcomes: outcomes(30, 0) + outcomes(39, 11) }), 'failures'],
    ['flood waits are judged first', health({ floodWaits: ago(4, 3, 2, 1), outcomes: outcomes(0, 50) }), 'flood_waits'],
  ])('%s', (_name, h, expected) => {
    expect(coolingReason(h, s, NOW)).toBe(expected);
  });
});

describe('decideCooling', () => {
  it.each([
    // name, health, configured pace, wait in job, cool ms (null: none), factor, since
    ['healthy: nothing changes', health(), 40, null, null, 1, null],
    ['K + 1 waits: 30 min, pace halved, recovery from the end', health({ floodWaits: ago(40, 30, 20, 0) }), 40, NOW, 30 * MIN, 0.5, NOW + 30 * MIN],
    [
      'a repeat within 24 h doubles the cooling',
      health({ floodWaits: ago(3, 2, 1, 0), lastCooling: { at: NOW - 2 * HOUR, ms: 30 * MIN } }),
      40,
      NOW,
      60 * MIN,
      0.5,
      NOW + 60 * MIN,
    ],
    [
      'a repeat after 24 h starts again at 30 min',
      health({ floodWaits: ago(3, 2, 1, 0), lastCooling: { at: NOW - 25 * HOUR, ms: 8 * HOUR } }),
      40,
      NOW,
      30 * MIN,
      0.5,
      NOW + 30 * MIN,
    ],
    [
      'doubling stops at the cap of 24 h',
      health({ floodWaits: ago(3, 2, 1, 0), lastCooling: { at: NOW - HOUR, ms: 16 * HOUR } }),
      40,
      NOW,
      24 * HOUR,
      0.5,
      NOW + 24 * HOUR,
    ],
    ['a lowered pace halves again', health({ floodWaits: ago(3, 2, 1, 0), paceFactor: 0.5, paceSince: NOW }), 40, NOW, 30 * MIN, 0.25, NOW + 30 * MIN],
    ['never below 1 a minute', health({ floodWaits: ago(3, 2, 1, 0), paceFactor: 0.04, paceSince: NOW }), 40, NOW, 30 * MIN, 1 / 40, NOW + 30 * MIN],
    ['failures cool too', health({ outcomes: outcomes(30, 20) }), 40, null, 30 * MIN, 0.5, NOW + 30 * MIN],
    [
      'a wait that does not cool restarts the clean interval, keeping what was recovered',
      health({ floodWaits: ago(0), paceFactor: 0.5, paceSince: NOW - 25 * MIN }),
      40,
      NOW,
      null,
      0.7,
      NOW,
    ],
    ['a wait at full pace changes nothing', health({ floodWaits: ago(0) }), 40, NOW, null, 1, null],
    [
      'without a wait the written factor stands (recovery is worked out when read)',
      health({ paceFactor: 0.5, paceSince: NOW - 25 * MIN }),
      40,
      null,
      null,
      0.5,
      NOW - 25 * MIN,
    ],
  ])('%s', (_name, h, perMinute, wait, coolMs, factor, since) => {
    const d = decideCooling(h, s, perMinute, NOW, wait);
    expect(d.cool?.ms ?? null).toBe(coolMs);
    if (coolMs !== null) expect(d.cool!.until).toBe(NOW + coolMs);
    expect(d.paceFactor).toBeCloseTo(factor, 10);
    expect(d.paceSince).toBe(since);
  });

  it('switched off (COOLING_ENABLED=false), nothing cools', () => {
    expect(decideCooling(health({ floodWaits: ago(3, 2, 1, 0) }), { ...s, enabled: false }, 40, NOW, NOW).cool).toBeNull();
  });
});

describe('paceFactorAt: additive recovery', () => {
  const since = NOW;
  it.each([
    [-5, 0.5], // still cooling: no recovery before `since`
    [0, 0.5],
    [9, 0.5],
    [10, 0.6],
    [29, 0.7],
    [30, 0.8],
    [50, 1],
    [500, 1], // up to the configured pace, never above
  ])('%i min after the cooling ends → %p', (minutes, factor) => {
    expect(paceFactorAt(0.5, since, NOW + minutes * MIN, s)).toBeCloseTo(factor, 10);
  });

  it.each([
    [40, 1, 40],
    [40, 0.5, 20],
    [40, 0.6, 24],
    [40, 1 / 40, 1],
    [1, 0.5, 1], // 1 a minute is the floor
  ])('effective pace of %i/min at factor %p → %i/min', (configured, factor, effective) => {
    expect(effectivePerMinute(configured, factor)).toBe(effective);
  });
});

describe('appendOutcomes', () => {
  it('keeps the latest N', () => {
    expect(appendOutcomes('sss', 'ff', 4)).toBe('ssff');
    expect(appendOutcomes('', 'sf', 50)).toBe('sf');
  });
});

describe('isFloodWait', () => {
  it.each([
    ['flood_wait', true],
    ['rate_overlimit', true],
    ['connection_replaced', false],
    ['socket_handover', false],
    ['keys_unsaved', false],
    ['proxy_failed', false],
  ])('%s → %p', (code, counts) => {
    expect(isFloodWait(code)).toBe(counts);
  });
});
