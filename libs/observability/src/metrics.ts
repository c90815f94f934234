import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every metric Metronome exports (CONTRACT §6 names are fixed). Each service creates one
 * `Metrics` on its own registry and uses the part that concerns it; nothing is global.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly runStartLag = new Histogram({
    name: 'metronome_run_start_lag_seconds',
    help: "A run's first send attempt minus its scheduledAt",
    labelNames: ['trigger'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800],
    registers: [this.registry],
  });

  readonly scheduleLag = new Histogram({
    name: 'metronome_schedule_lag_seconds',
    help: 'Run created minus the occurrence it is for',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly jobOutcomes = new Counter({
    name: 'metronome_job_outcomes_total',
    help: 'Sender jobs and scheduler decisions by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly sends = new Counter({
    name: 'metronome_sends_total',
    help: 'Message parts handed to a platform, by result',
    labelNames: ['platform', 'result'] as const,
    registers: [this.registry],
  });

  readonly providerWait = new Counter({
    name: 'metronome_provider_wait_seconds_total',
    help: 'Waiting imposed by the platform (flood wait: account, slow mode: chat)',
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });

  readonly runs = new Gauge({
    name: 'metronome_runs',
    help: 'Runs by status',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly queueJobs = new Gauge({
    name: 'metronome_queue_jobs',
    help: 'Jobs in the runs queue by state',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  readonly schedulerTickSeconds = new Histogram({
    name: 'metronome_scheduler_tick_seconds',
    help: 'Duration of one scheduler tick',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2],
    registers: [this.registry],
  });

  readonly reconciled = new Counter({
    name: 'metronome_reconciled_total',
    help: 'Repairs made by the reconciler: lost jobs re-enqueued, expired leases marked unknown',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
    // Every outcome appears from the start, so dashboards show zeros rather than gaps.
  }

  /** Start every outcome series at zero. */
  initOutcomes(outcomes: readonly string[]): void {
    for (const outcome of outcomes) this.jobOutcomes.inc({ outcome }, 0);
  }
}
