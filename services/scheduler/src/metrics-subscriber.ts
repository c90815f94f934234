import { SKIP_REASONS } from '@metronome/core';
import { subscribe, type Metrics } from '@metronome/observability';
import type { SchedulerEvents } from './scheduler-events.js';

/** Turns the scheduler's events into its metrics. The names and labels are the contract (docs/CONTRACT.md §6, infra alert rules); returns the unsubscribe. */
export function subscribeMetrics(events: SchedulerEvents, metrics: Metrics): () => void {
  // the not-delivering alert reads this series: it exists from the start, at 0
  for (const platform of ['http', 'whatsapp']) metrics.accountCooling.inc({ platform, reason: 'not_delivering' }, 0);
  return subscribe(events, {
    'schedule:decision': ({ decision: d, at }) => {
      if (d.outcome === 'sent' && d.dueAt) metrics.scheduleLag.observe(Math.max(0, at - d.dueAt.getTime()) / 1000);
      metrics.jobOutcomes.inc({ outcome: d.outcome });
    },
    'tick:counts': (e) => {
      if (e.repeatedNoAccount > 0) metrics.jobOutcomes.inc({ outcome: 'no-account' }, e.repeatedNoAccount);
      if (e.coalesced) metrics.scheduleCoalesced.inc(e.coalesced);
      for (const r of SKIP_REASONS) if (e.skipped[r]) metrics.occurrencesSkipped.inc({ reason: r }, e.skipped[r]);
      if (e.autoResumed) metrics.schedulerActions.inc({ action: 'auto-resume' }, e.autoResumed);
      if (e.autoPaused) metrics.schedulerActions.inc({ action: 'auto-pause' }, e.autoPaused);
    },
    'tick:timed': (e) => {
      metrics.schedulerTickSeconds.observe(e.wallMs / 1000);
      metrics.schedulerTickCpuSeconds.observe(e.cpuMs / 1000);
    },
    'account:not-delivering': (e) => metrics.accountCooling.inc({ platform: e.platform, reason: 'not_delivering' }),
    'tick:woken': () => metrics.schedulerActions.inc({ action: 'wake' }),
    'reconcile:done': (e) => {
      if (e.requeued) metrics.reconciled.inc({ kind: 'requeued' }, e.requeued);
      if (e.expiredLeases) metrics.reconciled.inc({ kind: 'lease-expired' }, e.expiredLeases);
    },
  });
}
