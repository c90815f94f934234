import { previewRun, type RunPlan } from './run-preview.js';
import { slotIntervalMs } from './run-eta.js';

// A run previewed at the account's pace: the same slots runEta counts for a live run.

const KL = 'Asia/Kuala_Lumpur';
const now = new Date('2030-01-16T03:00:00Z'); // 11:00 in Kuala Lumpur
const plan = (extra: Partial<RunPlan>): RunPlan => ({
  targets: 3,
  partsPerChat: 1,
  perMinute: 40,
  timezone: KL,
  window: { start: '06:00', end: '18:00' },
  startsAt: now,
  windowEndAt: new Date('2030-01-16T10:00:00Z'),
  ...extra,
});

test('three chats at 40/min: two slots of 1530 ms after the first send; fits', () => {
  expect(slotIntervalMs(40)).toBeCloseTo(1530, 6);
  expect(previewRun(plan({}), now)).toEqual({
    targets: 3,
    pacedPerMinute: 39.22,
    durationSeconds: 4,
    fitsWindow: true,
    detail:
      "Sending to 3 chats takes about 4 s at the account's pace of 40/min; the first run, from 11:00, ends before the window closes at 18:00 (Asia/Kuala_Lumpur).",
  });
});

test('every part takes a slot: 1000 chats × 2 parts at 40/min need about 51 minutes', () => {
  const p = previewRun(plan({ targets: 1000, partsPerChat: 2 }), now);
  expect(p.durationSeconds).toBe(Math.ceil((1999 * 1530) / 1000));
  expect(p.detail).toMatch(
    /^Sending to 1000 chats \(2 parts each\) takes about 51 min at the account's pace of 40 sends\/min \(20 chats\/min at 2 parts each\)/,
  );
  expect(p.fitsWindow).toBe(true);
});

test('a run that cannot finish before the close says how many chats fit, as a live run does', () => {
  // from 17:42, 18 minutes: 706 slots of 1530 ms, 353 chats at 2 parts
  const p = previewRun(plan({ targets: 1000, partsPerChat: 2, startsAt: new Date('2030-01-16T09:42:00Z') }), now);
  expect(p.fitsWindow).toBe(false);
  expect(p.detail).toBe(
    "Sending to 1000 chats (2 parts each) takes about 51 min at the account's pace of 40 sends/min (20 chats/min at 2 parts each); the first run starts at 17:42 and the window closes at 18:00 (Asia/Kuala_Lumpur): about 353 of the 1000 chats fit, then the run pauses with the rest pending.",
  );
});

test('a window that never closes always fits; a start on another day is dated', () => {
  expect(previewRun(plan({ targets: 10_000, windowEndAt: null, window: { start: '00:00', end: '24:00' } }), now)).toMatchObject({
    fitsWindow: true,
    durationSeconds: Math.ceil((9999 * 1530) / 1000),
  });
  const tomorrow = previewRun(plan({ startsAt: new Date('2030-01-16T22:00:00Z'), windowEndAt: new Date('2030-01-17T10:00:00Z') }), now);
  expect(tomorrow.detail).toContain('from 17 Jan 06:00, ends before the window closes at 17 Jan 18:00');
});

test('a campaign without a run ahead still gets its duration, and does not claim to fit', () => {
  expect(previewRun(plan({ startsAt: null, windowEndAt: null }), now)).toMatchObject({
    durationSeconds: 4,
    fitsWindow: false,
    detail: expect.stringMatching(/no run ahead\.$/),
  });
});

test('one chat: no wait at all', () => {
  expect(previewRun(plan({ targets: 1 }), now)).toMatchObject({ durationSeconds: 0, detail: expect.stringMatching(/^Sending to 1 chat takes about 0 s/) });
});
