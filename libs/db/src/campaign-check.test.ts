import { deactivationReason, evaluationProblem, CampaignProblem, messagesProblem, planProblem, scheduleProblem, timeProblem } from './campaign-check.js';
import { noSkips } from '@metronome/core';

describe('timeProblem', () => {
  test.each([
    ['0001-01-01T00:00:00.000Z', null],
    ['9999-12-31T23:59:59.999Z', null],
    ['0000-12-31T23:59:59.999Z', 'its due time 0000-12-31T23:59:59.999Z is outside the years 0001 to 9999 that can be stored'],
    ['+010000-01-01T00:00:00.000Z', 'its due time +010000-01-01T00:00:00.000Z is outside the years 0001 to 9999 that can be stored'],
  ])('%s', (iso, problem) => {
    expect(timeProblem('its due time', new Date(iso))).toBe(problem);
  });
  test('null is no time to store; an invalid date or a non-date is a problem', () => {
    expect(timeProblem('its window end', null)).toBeNull();
    expect(timeProblem('its due time', new Date(NaN))).toBe('its due time is not a valid time (Invalid Date)');
    expect(timeProblem('its due time', -Infinity)).toBe('its due time is not a valid time (-Infinity)');
  });
});

test('scheduleProblem names what cannot be evaluated', () => {
  expect(scheduleProblem({ type: 'interval', everySeconds: 60 })).toBeNull();
  expect(scheduleProblem({ type: 'interval', everySeconds: 0.5 })).toMatch(/everySeconds \(0.5\)/);
  expect(scheduleProblem({ type: 'cron' })).toBe('its cron schedule has no expression');
  expect(scheduleProblem({ type: 'once', at: 'whenever' })).toBeNull(); // the due time is next_run_at
  expect(scheduleProblem({})).toBe('its schedule has no type');
  expect(scheduleProblem({ type: 'weekly' })).toBe('its schedule type "weekly" is not interval, cron or once');
  expect(scheduleProblem('interval')).toBe('its schedule is not an object');
});

test('messagesProblem wants at least one text or media part', () => {
  expect(
    messagesProblem([
      { type: 'text', text: 'hi' },
      { type: 'media', mediaId: 'm' },
    ]),
  ).toBeNull();
  expect(messagesProblem([])).toBe('it has no message parts');
  expect(messagesProblem({ type: 'text', text: 'hi' })).toBe('it has no message parts');
  expect(messagesProblem([{ type: 'text', text: 'hi' }, { type: 'video' }])).toBe('its message part 2 is neither a text part nor a media part');
});

test('planProblem checks every time a plan would write', () => {
  const ok = new Date('2026-01-01T00:00:00Z');
  const none = { skipped: noSkips(), lastSkippedAt: null, acceptedThrough: null };
  expect(planProblem({ kind: 'run', occurrence: ok, scheduledAt: ok, windowEndAt: null, next: null, coalesced: 0, ...none })).toBeNull();
  expect(planProblem({ kind: 'run', occurrence: ok, scheduledAt: ok, windowEndAt: null, next: new Date(NaN), coalesced: 0, ...none })).toMatch(
    /^its next occurrence is not a valid time/,
  );
  expect(planProblem({ kind: 'wait-for-window', next: new Date('+020000-01-01T00:00:00Z'), ...none })).toMatch(/outside the years/);
});

test('the reason kept in last_error is one plain sentence PostgreSQL text can hold', () => {
  const reason = deactivationReason(evaluationProblem(new Error('bad\u0000zone\r\nname')));
  expect(reason).toBe(
    'The scheduler could not turn this campaign into a run and deactivated it: evaluating its schedule or delivery window failed (bad zone name). Correct it, then set active to true.',
  );
  const long = deactivationReason(evaluationProblem(new CampaignProblem('x'.repeat(1000))));
  expect(long).toContain(`${'x'.repeat(400)}…. Correct it`);
  expect(long).not.toContain('x'.repeat(401));
});
