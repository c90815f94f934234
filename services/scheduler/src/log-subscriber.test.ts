import { createLogger } from '@metronome/observability';
import { subscribeLogs } from './log-subscriber.js';
import { schedulerEvents } from './scheduler-events.js';

// Each event writes the line the scheduler wrote itself: level, message and fields, read back
// from pino's JSON in memory.

type Line = Record<string, unknown> & { level: number; msg: string };

function setup() {
  const lines: Line[] = [];
  const logger = createLogger('scheduler-test', 'debug', { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  const events = schedulerEvents();
  subscribeLogs(events, logger);
  return { events, lines };
}

describe('subscribeLogs (scheduler)', () => {
  test('a decision is one line, its reason the message, at warn when it failed', () => {
    const { events, lines } = setup();
    const dueAt = new Date('2026-06-01T09:00:00Z');
    events.emit('schedule:decision', { decision: { campaignId: 'c1', runId: 'r1', outcome: 'sent', reason: 'run created', dueAt }, at: 0 });
    events.emit('schedule:decision', { decision: { campaignId: 'c2', outcome: 'failed', reason: 'schedule cannot be evaluated' }, at: 0 });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'run created', campaignId: 'c1', runId: 'r1', decision: 'sent', dueAt: dueAt.toISOString() });
    expect(lines[0]).not.toHaveProperty('reason');
    expect(lines[1]).toMatchObject({ level: 40, msg: 'schedule cannot be evaluated', campaignId: 'c2', decision: 'failed' });
  });

  test("the reconciler's lines: a run re-enqueued, a cooling ended, leases expired, paused runs cancelled; none for a quiet pass", () => {
    const { events, lines } = setup();
    events.emit('run:requeued', { runId: 'r1', jobSeq: 3 });
    events.emit('account:cooling-ended', { accountId: 'a1', platform: 'http' });
    events.emit('reconcile:done', { requeued: 1, expiredLeases: 2, expiredPaused: 4 });
    events.emit('reconcile:done', { requeued: 0, expiredLeases: 0, expiredPaused: 0 });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, 'run had no live job in Redis: re-enqueued'],
      [30, 'account cooling ended: active again, its pace recovering step by step'],
      [40, 'in-flight sends whose sender stopped: marked unknown'],
      [30, 'paused runs past PAUSED_RUN_TTL: cancelled'],
    ]);
    expect(lines[0]).toMatchObject({ runId: 'r1', jobSeq: 3 });
    expect(lines[1]).toMatchObject({ accountId: 'a1', platform: 'http' });
    expect(lines[2]).toMatchObject({ targets: 2 });
    expect(lines[3]).toMatchObject({ runs: 4 });
  });

  test("the leadership's lines, and a tick done again on its data", () => {
    const { events, lines } = setup();
    events.emit('leader:gained', { fence: 7, holder: 'h1' });
    events.emit('leader:lapsed', { state: 'lost' });
    events.emit('leader:lost', {});
    events.emit('tick:redo', { error: new Error('value too long') });
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, msg: 'leading the schedule', fence: 7, holder: 'h1' }),
      expect.objectContaining({ level: 40, msg: 'leader lease lapsed: leadership ends until the next tick', state: 'lost' }),
      expect.objectContaining({ level: 40, msg: 'leadership lost: standing by' }),
      expect.objectContaining({
        level: 40,
        msg: 'a batched statement of the tick failed on its data: doing the tick again, setting aside the rows that fail',
        err: expect.objectContaining({ message: 'value too long' }),
      }),
    ]);
  });

  test('metrics-only events write no line', () => {
    const { events, lines } = setup();
    events.emit('tick:timed', { wallMs: 1, cpuMs: 1 });
    events.emit('tick:woken', {});
    events.emit('tick:counts', {
      repeatedNoAccount: 1,
      coalesced: 0,
      skipped: { too_late: 0, superseded: 0, missed: 0, catch_up_limit: 0 },
      autoResumed: 0,
      autoPaused: 0,
    });
    expect(lines).toEqual([]);
  });
});
