import { coolingSettings } from '@metronome/config';
import { AccountCoolingRepository, senderRepositories, TargetSendRepository } from '@metronome/db';
import { RunQueue } from '@metronome/queue';
import { AccountLock, AccountPace, type RedisKeys, type ScriptCommands } from '@metronome/redis';
import type { SenderConfig } from './config.js';
import type { SenderDeps, SenderSettings } from './deps.js';
import { MediaRefs } from './media-refs.js';
import { reportingEvents } from './reporting-events.js';
import { ClaimStatements, jobCloses, partWrites, runLoads, runStarts } from './statements.js';

/** What the sender's dependencies are made from: connections and keys, and what a job takes as given. */
export type SenderInputs = Pick<
  SenderDeps,
  'transports' | 'secretsKeys' | 'clock' | 'logger' | 'metrics' | 'settings' | 'random' | 'sleep' | 'draining' | 'routes'
> & {
  /** the event bus; absent: one wired to `metrics` and `logger` */
  events?: SenderDeps['events'];
  db: Parameters<typeof senderRepositories>[0];
  redis: ConstructorParameters<typeof RunQueue>[0];
  scripts: ScriptCommands;
  keys: RedisKeys;
};

/** The sender's dependencies, built one way for main.ts and the tests' harness: the tests run the job on a replica's wiring. */
export function buildSenderDeps(i: SenderInputs): SenderDeps {
  const repo = senderRepositories(i.db);
  const targets = new TargetSendRepository(i.db);
  return {
    repo,
    targets,
    claims: new ClaimStatements(targets, i.clock),
    loads: runLoads(repo.runs, i.settings.sendsPerJob),
    starts: runStarts(repo.runs, i.clock),
    closes: jobCloses(targets, i.clock),
    parts: partWrites(targets, i.clock),
    cooling: new AccountCoolingRepository(i.db),
    lock: new AccountLock(i.scripts, i.keys),
    pace: new AccountPace(i.scripts, i.keys),
    queue: new RunQueue(i.redis, i.keys.queuePrefix),
    ...(i.routes && { routes: i.routes }),
    transports: i.transports,
    media: new MediaRefs(repo),
    secretsKeys: i.secretsKeys,
    clock: i.clock,
    events: i.events ?? reportingEvents(i.metrics, i.logger),
    logger: i.logger,
    metrics: i.metrics,
    settings: i.settings,
    random: i.random,
    sleep: i.sleep,
    draining: i.draining,
  };
}

/** A job's settings from the sender's configuration (the environment, parsed once). */
export function senderSettings(config: SenderConfig): SenderSettings {
  return {
    sendsPerJob: config.SENDS_PER_JOB,
    defaultMaxSendPerMinute: config.DEFAULT_MAX_SEND_PER_MINUTE,
    defaultGroupConcurrency: config.DEFAULT_GROUP_CONCURRENCY,
    rateBurst: config.RATE_BURST,
    maxRetries: config.MAX_RETRIES,
    sendTimeoutMs: config.SEND_TIMEOUT_MS,
    maxInlineWaitMs: config.SENDER_MAX_INLINE_WAIT_MS,
    maxGateWaitMs: config.SENDER_MAX_GATE_WAIT_MS,
    lockRetryMs: config.SENDER_LOCK_RETRY_MS,
    lockTtlMs: config.SENDER_HOLD_MS,
    chatPacePerMinute: {
      telegram: config.CHAT_MAX_SEND_PER_MINUTE_TELEGRAM,
      // a user account meets the same per-group limit as a bot
      telegram_user: config.CHAT_MAX_SEND_PER_MINUTE_TELEGRAM,
      whatsapp: config.CHAT_MAX_SEND_PER_MINUTE_WHATSAPP,
      http: config.CHAT_MAX_SEND_PER_MINUTE_HTTP,
    },
    partJitterMs: config.PART_JITTER_MS,
    cooling: coolingSettings(config),
  };
}
