import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every metric Metronome exports (CONTRACT §6 names are fixed), on the service's own registry; nothing is global. */
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

  readonly jobWait = new Histogram({
    name: 'metronome_job_wait_seconds',
    help: 'A sender job began minus when it was due (added, plus its delay): time spent waiting for a free sender slot',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });

  readonly jobSeconds = new Histogram({
    name: 'metronome_job_seconds',
    help: 'How long a sender job held its slot, from begin to outcome',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
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

  readonly accountCooling = new Counter({
    name: 'metronome_account_cooling_total',
    help: 'Accounts set cooling automatically, by platform and reason (flood_waits, failures)',
    labelNames: ['platform', 'reason'] as const,
    registers: [this.registry],
  });

  readonly newChatsHeld = new Counter({
    name: 'metronome_whatsapp_new_chats_held_total',
    help: "WhatsApp holds on an account's new chats as a replica learnt them, by reason (new_chats_refused: a 463; reachout_time_lock; new_chat_cap)",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly unknownSettled = new Counter({
    name: 'metronome_unknown_settled_total',
    help: 'Chats whose delivery was in doubt, settled as sent by sending again to a platform that deduplicates, by platform',
    labelNames: ['platform'] as const,
    registers: [this.registry],
  });

  readonly directorySyncs = new Counter({
    name: 'metronome_directory_syncs_total',
    help: 'Chat directory syncs ended, by platform and where each stands (ok, backing_off, unsupported, failed)',
    labelNames: ['platform', 'status'] as const,
    registers: [this.registry],
  });

  readonly directorySyncSeconds = new Histogram({
    name: 'metronome_directory_sync_seconds',
    help: 'How long one chat directory sync took, by platform',
    labelNames: ['platform'] as const,
    buckets: [0.1, 0.5, 1, 2, 5, 15, 60, 300, 600],
    registers: [this.registry],
  });

  readonly dbQueries = new Counter({
    name: 'metronome_db_queries_total',
    help: 'PostgreSQL statements sent (each one round trip), for the cost per send',
    registers: [this.registry],
  });

  readonly redisCommands = new Counter({
    name: 'metronome_redis_commands_total',
    help: 'Redis commands sent, by connection (app: locks, pace, enqueue; worker: BullMQ), for the cost per send',
    labelNames: ['connection'] as const,
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

  readonly scheduleCoalesced = new Counter({
    name: 'metronome_schedule_coalesced_total',
    help: 'Occurrences the scheduler folded into a later one because it (or the previous run) was behind',
    registers: [this.registry],
  });

  readonly retentionDeleted = new Counter({
    name: 'metronome_retention_deleted_rows_total',
    help: 'Rows the retention sweep deleted, by kind: targets, events, runs (summaries), webhook_deliveries, media, tenant_rows (a deleted tenant)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly retentionSweeps = new Counter({
    name: 'metronome_retention_sweeps_total',
    help: 'Retention sweeps by result: ok or error',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly occurrencesSkipped = new Counter({
    name: 'metronome_occurrences_skipped_total',
    help: "Occurrences never turned into a run, by the campaign's catch-up policy: too_late (older than maxLatenessSeconds), superseded (latest: a later one ran), missed (skip: not reached on time), catch_up_limit (all: beyond 100)",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly schedulerActions = new Counter({
    name: 'metronome_scheduler_actions_total',
    help: 'Scheduler actions besides creating runs: auto-resume (window-paused run queued again), auto-pause (NO_ACCOUNT_AUTOPAUSE_AFTER), wake (a tick brought forward by the API)',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });

  readonly schedulerTickCpuSeconds = new Histogram({
    name: 'metronome_scheduler_tick_cpu_seconds',
    help: 'CPU time (user + system) the scheduler process spent on one leading tick',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });

  readonly schedulerDbStatements = new Counter({
    name: 'metronome_scheduler_db_statements_total',
    help: 'SQL statements the scheduler sent to PostgreSQL (counted by a Kysely plugin)',
    registers: [this.registry],
  });

  readonly schedulerRedisCommands = new Counter({
    name: 'metronome_scheduler_redis_commands_total',
    help: 'Redis commands the scheduler sent (counted on its connection, pipelines included)',
    registers: [this.registry],
  });

  readonly httpRequestDuration = new Histogram({
    name: 'metronome_http_request_duration_seconds',
    help: 'Control API requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly runsDueNotStarted = new Gauge({
    name: 'metronome_runs_due_not_started',
    help: 'Queued runs whose scheduledAt has passed and that have not sent anything yet',
    registers: [this.registry],
  });

  readonly runsDueNotStartedOldestAge = new Gauge({
    name: 'metronome_runs_due_not_started_oldest_age_seconds',
    help: 'Age of the oldest due-but-not-started run (now minus its scheduledAt), 0 when there is none',
    registers: [this.registry],
  });

  readonly accounts = new Gauge({
    name: 'metronome_accounts',
    help: 'Accounts by platform and status (active, disabled, disconnected, pairing, cooling), from PostgreSQL at scrape time',
    labelNames: ['platform', 'status'] as const,
    registers: [this.registry],
  });

  readonly accountsBlocked = new Gauge({
    name: 'metronome_accounts_blocked',
    help: 'Active accounts the platform told to wait (flood wait): blockedUntil is in the future',
    labelNames: ['platform'] as const,
    registers: [this.registry],
  });

  readonly dependencyUp = new Gauge({
    name: 'metronome_dependency_up',
    help: 'Whether this process reached the dependency (postgres, redis) at its last scrape: 1 yes, 0 no',
    labelNames: ['dependency'] as const,
    registers: [this.registry],
  });

  readonly platformConnections = new Counter({
    name: 'metronome_platform_connections_total',
    help: 'Platform connections (WhatsApp sockets) this process opened and closed, closes by reason; every opening is a login the platform sees, so a fast-growing count is a ban risk',
    labelNames: ['platform', 'event', 'reason'],
    registers: [this.registry],
  });

  readonly optOuts = new Counter({
    name: 'metronome_opt_outs_total',
    help: "Replies that were one of their account's opt-out keywords: the chat joined the suppression list",
    labelNames: ['platform'] as const,
    registers: [this.registry],
  });

  readonly platformSocketsOpen = new Gauge({
    name: 'metronome_platform_sockets_open',
    help: 'Platform connections (WhatsApp sockets) open in this process now',
    labelNames: ['platform'],
    registers: [this.registry],
  });

  readonly receipts = new Counter({
    name: 'metronome_receipts_total',
    help: 'Receipts the platforms told, by platform and status (delivered, read; unknown: naming no sent message of the account, ignored)',
    labelNames: ['platform', 'status'] as const,
    registers: [this.registry],
  });

  readonly receiptDelay = new Histogram({
    name: 'metronome_receipt_delay_seconds',
    help: "How long after the send a target's first delivery / read receipt said it happened, by platform and status",
    labelNames: ['platform', 'status'] as const,
    buckets: [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600],
    registers: [this.registry],
  });

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
    // Every outcome appears from the start, so dashboards show zeros rather than gaps.
  }

  initOutcomes(outcomes: readonly string[]): void {
    for (const outcome of outcomes) this.jobOutcomes.inc({ outcome }, 0);
  }
}
