import { randomUUID, createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { DEFAULT_COOLING, ManualClock, DEVELOPMENT_SECRETS_KEY, seal, type Outcome } from '@metronome/core';
import type { MessagePart } from '@metronome/db';
import { createLogger, Metrics } from '@metronome/observability';
import { createRedis, loadScripts, redisKeys } from '@metronome/redis';
import { HttpTransport, type Transport } from '@metronome/transports';
import { buildSandbox } from '../../services/sandbox/src/app.js';
import { buildSenderDeps } from '../../services/sender/src/build-deps.js';
import type { SenderDeps, SenderSettings } from '../../services/sender/src/deps.js';
import { processRunJob } from '../../services/sender/src/run-job.js';
import { seedAccount, seedCampaign, seedRun, seedTenant } from './seed.js';
import { createTestDatabase, REDIS_URL, uniquePrefix, type TestDatabase } from './test-env.js';

/**
 * The sender's job function in-process, on real PostgreSQL, real Redis and a real sandbox over
 * HTTP, with a manual clock: a test drives jobs one at a time and moves time itself. Waiting
 * for a pace token advances the clock instead of sleeping.
 */
export interface SenderHarness {
  clock: ManualClock;
  tdb: TestDatabase;
  redis: Redis;
  sandbox: FastifyInstance;
  sandboxUrl: string;
  deps: SenderDeps;
  metrics: Metrics;
  close(): Promise<void>;
  /** An account (platform `http`, with a random API key, unless told; credentials sealed with the development key, as the API would). */
  seedAccount(opts?: {
    externalId?: string;
    maxSendPerMinute?: number;
    groupConcurrency?: number;
    platform?: 'http' | 'telegram' | 'telegram_user' | 'whatsapp';
    credentials?: Record<string, unknown>;
  }): Promise<{ tenantId: string; accountId: string; externalId: string }>;
  seedMedia(tenantId: string, bytes: Buffer, contentType?: string): Promise<string>;
  seedRun(opts: {
    tenantId: string;
    accountId: string;
    targets: string[];
    /** each target's forum topic, in the order of targets (0: none) */
    threads?: number[];
    parts: MessagePart[];
    scheduledAt?: Date;
    windowEndAt?: Date | null;
    window?: { start: string; end: string };
    timezone?: string;
  }): Promise<string>;
  /** Runs the run's current job once, as a worker would. */
  runJob(runId: string): Promise<Outcome>;
  run(runId: string): Promise<{ status: string; paused_reason: string | null; error_summary: string | null; job_id: string | null }>;
  targets(runId: string): Promise<
    {
      chat_id: string;
      status: string;
      attempts: number;
      parts_sent: number;
      error_code: string | null;
      next_attempt_at: Date;
      lease_owner: string | null;
      send_started_at: Date | null;
    }[]
  >;
  sandboxGet<T = any>(path: string): Promise<T>;
  sandboxPut(path: string, body: unknown): Promise<void>;
}

export interface HarnessOptions {
  /** transports for other platforms, next to the sandbox's `http` one (built with the harness clock) */
  transports?: (clock: ManualClock) => Record<string, Transport>;
}

export async function startSenderHarness(
  settings: Partial<SenderSettings> = {},
  start = Date.parse('2026-06-01T09:00:00Z'),
  options: HarnessOptions = {},
): Promise<SenderHarness> {
  const clock = new ManualClock(start);
  const tdb = await createTestDatabase('sender');
  const redis = createRedis(REDIS_URL, 'test-sender');
  const keys = redisKeys(uniquePrefix('sender'));
  const scripts = loadScripts(redis);
  const sandbox = await buildSandbox({
    config: { limits: { latencyMs: 0, maxPerMinute: 0, burst: 1, slowModeSeconds: 0, faultRate: 0 }, seed: 1 },
    clock: () => clock.now(),
  });
  await sandbox.listen({ port: 0, host: '127.0.0.1' });
  const sandboxUrl = `http://127.0.0.1:${(sandbox.server.address() as AddressInfo).port}`;
  const metrics = new Metrics('sender-test');
  const transport = new HttpTransport({ baseUrl: sandboxUrl, timeoutMs: settings.sendTimeoutMs ?? 5000 });
  // the wiring main.ts uses, with the harness's clock, settings and instant sleep
  const deps = buildSenderDeps({
    db: tdb.db,
    redis,
    scripts,
    keys,
    transports: { ...options.transports?.(clock), http: transport },
    secretsKeys: [DEVELOPMENT_SECRETS_KEY],
    clock,
    logger: createLogger('sender-test', 'silent'),
    metrics,
    settings: {
      sendsPerJob: 20,
      defaultMaxSendPerMinute: 60_000,
      defaultGroupConcurrency: 3,
      rateBurst: 1,
      maxRetries: 3,
      sendTimeoutMs: 5000,
      maxInlineWaitMs: 2000,
      // 0: chats not due yet are waited for as long as a pace slot (maxInlineWaitMs)
      maxGateWaitMs: 0,
      lockRetryMs: 500,
      lockTtlMs: 30_000,
      chatPacePerMinute: {},
      partJitterMs: 0,
      cooling: DEFAULT_COOLING,
      ...settings,
    },
    random: () => 0.5,
    // Waiting moves the clock to the wake-up time; lanes waiting together do not add up.
    sleep: async (ms) => {
      const wakeAt = clock.now() + ms;
      await Promise.resolve();
      clock.set(Math.max(clock.now(), wakeAt));
    },
    draining: new AbortController().signal,
  });
  const { queue } = deps;
  const db = tdb.db;
  const h: SenderHarness = {
    clock,
    tdb,
    redis,
    sandbox,
    sandboxUrl,
    deps,
    metrics,
    close: async () => {
      await queue.queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await transport.close();
      await Promise.all(Object.values(deps.transports).map((t) => (t && t !== transport ? t.close() : undefined)));
      await sandbox.close();
      await redis.quit();
      await tdb.drop();
    },
    seedAccount: async (opts = {}) => {
      const tenantId = await seedTenant(db);
      const externalId = opts.externalId ?? `acc-${randomUUID().slice(0, 8)}`;
      // An http account has its API key, as the API requires; the sandbox registers it on the first request.
      const credentials = opts.credentials ?? ((opts.platform ?? 'http') === 'http' ? { apiKey: `key-${randomUUID()}` } : null);
      const accountId = await seedAccount(db, tenantId, {
        platform: opts.platform ?? 'http',
        external_id: externalId,
        credentials: credentials ? seal(JSON.stringify(credentials), DEVELOPMENT_SECRETS_KEY) : null,
        max_send_per_minute: opts.maxSendPerMinute ?? null,
        group_concurrency: opts.groupConcurrency ?? null,
      });
      return { tenantId, accountId, externalId };
    },
    seedMedia: async (tenantId, bytes, contentType = 'image/png') => {
      const row = await db
        .insertInto('media')
        .values({
          tenant_id: tenantId,
          content_type: contentType,
          size: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          filename: 'x.png',
          bytes,
          storage_key: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },
    seedRun: async (o) => {
      const campaignId = await seedCampaign(db, o, {
        timezone: o.timezone ?? 'UTC',
        schedule: JSON.stringify({ type: 'once', at: new Date(clock.now()).toISOString() }),
        window_start: o.window?.start ?? '00:00',
        window_end: o.window?.end ?? '24:00',
        messages: JSON.stringify(o.parts),
        targets: o.targets,
        ...(o.threads && { target_threads: o.threads }),
        active: false,
      });
      return seedRun(db, {
        campaignId,
        tenantId: o.tenantId,
        accountId: o.accountId,
        parts: o.parts,
        scheduledAt: o.scheduledAt ?? new Date(clock.now()),
        windowEndAt: o.windowEndAt ?? null,
      });
    },
    runJob: async (runId) => {
      const run = await db.selectFrom('runs').select('job_id').where('id', '=', runId).executeTakeFirstOrThrow();
      return processRunJob(deps, { runId, jobId: run.job_id! });
    },
    run: (runId) => db.selectFrom('runs').select(['status', 'paused_reason', 'error_summary', 'job_id']).where('id', '=', runId).executeTakeFirstOrThrow(),
    targets: (runId) =>
      db
        .selectFrom('run_targets')
        .select(['chat_id', 'status', 'attempts', 'parts_sent', 'error_code', 'next_attempt_at', 'lease_owner', 'send_started_at'])
        .where('run_id', '=', runId)
        .orderBy('chat_id')
        .execute(),
    sandboxGet: async <T>(path: string) => (await (await fetch(`${sandboxUrl}${path}`)).json()) as T,
    sandboxPut: async (path, body) => {
      const res = await fetch(`${sandboxUrl}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`sandbox PUT ${path} → ${res.status} ${await res.text()}`);
    },
  };
  return h;
}

/**
 * Runs a run's jobs one after another, moving the clock to each continuation's due time, until
 * the run leaves queued/running. A run whose next job is missing fails loudly.
 */
export async function driveRun(h: SenderHarness, runId: string, maxJobs = 200): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < maxJobs; i++) {
    outcomes.push(await h.runJob(runId));
    const run = await h.run(runId);
    if (run.status !== 'queued' && run.status !== 'running') return outcomes;
    const job = await h.deps.queue.queue.getJob(run.job_id!);
    if (!job) throw new Error(`run ${runId} is ${run.status} but its job ${run.job_id} is missing`);
    h.clock.advance(job.opts.delay ?? 0);
  }
  throw new Error(`run ${runId} still open after ${maxJobs} jobs: ${outcomes.join(',')}`);
}
