import { noSkips } from '@metronome/core';
import { Metrics } from '@metronome/observability';
import { subscribeMetrics } from './metrics-subscriber.js';
import { schedulerEvents, type SchedulerEvents } from './scheduler-events.js';

// Each event makes the metric change CONTRACT §6 names, read back from the registry.

function setup(): { events: SchedulerEvents; value: (name: string, labels?: Record<string, string>) => Promise<number> } {
  const metrics = new Metrics('scheduler-test');
  const events = schedulerEvents();
  subscribeMetrics(events, metrics);
  const value = async (name: string, labels: Record<string, string> = {}) => {
    const metric = await metrics.registry.getSingleMetric(name)!.get();
    return metric.values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))?.value ?? 0;
  };
  return { events, value };
}

describe('subscribeMetrics (scheduler)', () => {
  test('a decision counts its outcome; a created run observes its lag behind the occurrence', async () => {
    const { events, value } = setup();
    const at = Date.parse('2026-06-01T09:00:02Z');
    events.emit('schedule:decision', { decision: { campaignId: 'c', runId: 'r', outcome: 'sent', reason: 'run created', dueAt: new Date(at - 2000) }, at });
    events.emit('schedule:decision', { decision: { campaignId: 'c', outcome: 'no-account', reason: 'held', dueAt: new Date(at - 2000) }, at });
    expect(await value('metronome_job_outcomes_total', { outcome: 'sent' })).toBe(1);
    expect(await value('metronome_job_outcomes_total', { outcome: 'no-account' })).toBe(1);
    // only the created run's lag (2 s) is observed
    expect(await value('metronome_schedule_lag_seconds', { le: '1' })).toBe(0);
    expect(await value('metronome_schedule_lag_seconds', { le: '2' })).toBe(1);
    expect(await value('metronome_schedule_lag_seconds', { le: '+Inf' })).toBe(1);
  });

  test("a tick's counts: held campaigns re-checked, coalesced and skipped occurrences, auto-resume and auto-pause", async () => {
    const { events, value } = setup();
    events.emit('tick:counts', { repeatedNoAccount: 3, coalesced: 4, skipped: { ...noSkips(), too_late: 3, missed: 1 }, autoResumed: 2, autoPaused: 1 });
    expect(await value('metronome_job_outcomes_total', { outcome: 'no-account' })).toBe(3);
    expect(await value('metronome_schedule_coalesced_total')).toBe(4);
    expect(await value('metronome_occurrences_skipped_total', { reason: 'too_late' })).toBe(3);
    expect(await value('metronome_occurrences_skipped_total', { reason: 'missed' })).toBe(1);
    expect(await value('metronome_scheduler_actions_total', { action: 'auto-resume' })).toBe(2);
    expect(await value('metronome_scheduler_actions_total', { action: 'auto-pause' })).toBe(1);
  });

  test("a tick's wall and CPU time, a nudge, and the reconciler's repairs", async () => {
    const { events, value } = setup();
    events.emit('tick:timed', { wallMs: 30, cpuMs: 2 });
    events.emit('tick:woken', {});
    events.emit('reconcile:done', { requeued: 2, expiredLeases: 5, expiredPaused: 1 });
    expect(await value('metronome_scheduler_tick_seconds', { le: '0.025' })).toBe(0);
    expect(await value('metronome_scheduler_tick_seconds', { le: '0.05' })).toBe(1);
    expect(await value('metronome_scheduler_tick_cpu_seconds', { le: '0.001' })).toBe(0);
    expect(await value('metronome_scheduler_tick_cpu_seconds', { le: '0.0025' })).toBe(1);
    expect(await value('metronome_scheduler_actions_total', { action: 'wake' })).toBe(1);
    expect(await value('metronome_reconciled_total', { kind: 'requeued' })).toBe(2);
    expect(await value('metronome_reconciled_total', { kind: 'lease-expired' })).toBe(5);
  });
});
