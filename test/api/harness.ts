import { randomUUID } from 'node:crypto';
import { ManualClock } from '@metronome/core';
import type { DB, RunStatus, TargetStatus } from '@metronome/db';
import { createLogger, type Logger } from '@metronome/observability';
import { RunQueue } from '@metronome/queue';
import { createRedis, redisKeys } from '@metronome/redis';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { buildApp, type AppOptions } from '../../services/control-api/src/app.js';
import type { ApiConfig } from '../../services/control-api/src/config.js';
import type { AppDeps } from '../../services/control-api/src/context.js';
import { createTestDatabase, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';

// The control API on a fresh database and Redis prefix, driven with app.inject.

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** 11:00 in Kuala Lumpur on a Wednesday: inside a 06:00–18:00 window. */
export const NOW = Date.parse('2030-01-16T03:00:00Z');

export interface Api {
  app: FastifyInstance;
  db: Kysely<DB>;
  redis: Redis;
  queue: RunQueue;
  clock: ManualClock;
  config: ApiConfig;
  database: TestDatabase;
  /** the Redis key prefix of this API */
  prefix: string;
  close(): Promise<void>;
}

/** Dependencies a test adds to the app (e.g. a WhatsApp pairing pool), built on the API's own connections. */
export type ExtraDeps = (base: {
  db: Kysely<DB>;
  redis: Redis;
  prefix: string;
  clock: ManualClock;
}) => Partial<Pick<AppDeps, 'whatsappPairing' | 'accountLogout' | 'telegramSignIn'>>;

export async function startApi(label: string, overrides: Partial<ApiConfig> = {}, options: AppOptions = {}, logger?: Logger, extra?: ExtraDeps): Promise<Api> {
  const database = await createTestDatabase(label);
  const prefix = uniquePrefix(label);
  const redis = createRedis(REDIS_URL, `test-${label}`);
  const queue = new RunQueue(redis, redisKeys(prefix).queuePrefix);
  const clock = new ManualClock(NOW);
  const config: ApiConfig = {
    databaseUrl: database.url,
    redisUrl: REDIS_URL,
    keyPrefix: prefix,
    logLevel: 'silent',
    nodeEnv: 'test',
    host: '127.0.0.1',
    port: 0,
    adminToken: ADMIN_TOKEN,
    secretsKey: Buffer.alloc(32, 7),
    secretsKeyPrevious: null,
    developmentSecretsKey: false,
    minIntervalSeconds: 60,
    mediaMaxBytes: 16 * 1024 * 1024,
    defaultMaxSendPerMinute: 40,
    defaultGroupConcurrency: 3,
    // high enough that only the rate-limit test meets it
    rateLimitPerMinute: 1_000_000,
    // likewise: only the failure-limit tests meet it
    authFailuresPerMinute: 1_000_000,
    trustedProxies: [],
    sseMaxPerToken: 10,
    // No scheduler runs beside these tests: a due campaign stays without a run, as each test
    // seeds the runs it needs. Instant starts that create the run are tested with `create`.
    instantStarts: 'nudge',
    ...overrides,
  };
  let app: FastifyInstance;
  try {
    const added = extra?.({ db: database.db, redis, prefix, clock }) ?? {};
    app = await buildApp({ config, db: database.db, redis, queue, clock, logger: logger ?? createLogger('control-api-test', 'silent'), ...added }, options);
  } catch (err) {
    await queue.close();
    await redis.quit();
    await database.drop();
    throw err;
  }
  return {
    app,
    db: database.db,
    redis,
    queue,
    clock,
    config,
    database,
    prefix,
    close: async () => {
      await app.close();
      await queue.queue.obliterate({ force: true });
      await queue.close();
      await redis.quit();
      await database.drop();
    },
  };
}

/** The sandbox API key and a well-formed Telegram bot token the account tests create accounts with. */
export const SANDBOX_KEY = { apiKey: 'sandbox-api-key-0001' };
export const BOT = { botToken: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw' };

/**
 * A file's prelude: an API started before its tests (30 s allowed) and closed after them. The
 * object returned is filled in by the beforeAll, so the tests read it as the API itself.
 */
export function apiForFile(label: string, overrides: Partial<ApiConfig> = {}): Api {
  const api = {} as Api;
  beforeAll(async () => {
    Object.assign(api, await startApi(label, overrides));
  }, 30_000);
  afterAll(async () => api.close?.());
  return api;
}

/** A tenant made before the file's tests (after the API, declared first), filled in the same way. */
export function tenantForFile(api: Api, name: string): Tenant {
  const tenant = {} as Tenant;
  beforeAll(async () => {
    Object.assign(tenant, await createTenant(api, name));
  });
  return tenant;
}

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Record<string, unknown>;
}

/** One JSON request; `token` null sends no Authorization header. */
export async function call<T = any>(api: Api, method: string, url: string, token: string | null, body?: unknown): Promise<Answer<T>> {
  const res = await api.app.inject({
    method: method as 'GET',
    url,
    headers: { ...(token !== null && { authorization: `Bearer ${token}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { payload: JSON.stringify(body) }),
  });
  return { status: res.statusCode, body: res.body ? (safeJson(res.body) as T) : (undefined as T), headers: res.headers };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** An answer as a client can compare two of them: everything but the `date` header, which moves
 *  with the clock (two identical answers a second apart differ there and nowhere else). */
export function comparable(answer: Answer): Answer {
  const { date: _date, ...headers } = answer.headers;
  return { ...answer, headers };
}

/** The fields named by a 400's details. */
export function fields(answer: Answer): string[] {
  return (answer.body?.error?.details ?? []).map((d: { field: string }) => d.field);
}

export interface Tenant {
  id: string;
  token: string;
}

export async function createTenant(api: Api, name = 'tenant'): Promise<Tenant> {
  const res = await call(api, 'POST', '/v1/tenants', ADMIN_TOKEN, { name });
  if (res.status !== 201) throw new Error(`tenant not created: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, token: res.body.token };
}

export async function createAccount(api: Api, tenant: Tenant, externalId = `acc-${randomUUID().slice(0, 8)}`): Promise<string> {
  const res = await call(api, 'POST', '/v1/accounts', tenant.token, {
    platform: 'http',
    credentials: { apiKey: 'sandbox-api-key-0001' },
    name: 'account',
    externalId,
  });
  if (res.status !== 201) throw new Error(`account not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

export function campaignBody(accountId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    accountId,
    name: 'Morning reminder',
    timezone: 'Asia/Kuala_Lumpur',
    schedule: { type: 'interval', everySeconds: 300 },
    deliveryWindow: { start: '06:00', end: '18:00' },
    messages: [{ type: 'text', text: 'Hello' }],
    targets: ['chat-1', 'chat-2', 'chat-3'],
    ...extra,
  };
}

export async function createCampaign(api: Api, tenant: Tenant, extra: Record<string, unknown> = {}): Promise<{ id: string; accountId: string }> {
  const accountId = await createAccount(api, tenant);
  const res = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(accountId, extra));
  if (res.status !== 201) throw new Error(`campaign not created: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, accountId };
}

export interface SeededRun {
  id: string;
  campaignId: string;
}

/**
 * A run written straight into the database in any state, with targets in given states
 * (`{chat: status}`), as the scheduler and senders would have left it.
 */
export async function seedRun(
  api: Api,
  campaignId: string,
  status: RunStatus,
  targets: Record<string, TargetStatus>,
  extra: { createdAt?: Date; scheduledAt?: Date; jobSeq?: number; pausedReason?: 'window_closed' | 'operator' | 'account_unavailable' } = {},
): Promise<SeededRun> {
  const campaign = await api.db.selectFrom('campaigns').selectAll().where('id', '=', campaignId).executeTakeFirstOrThrow();
  const id = randomUUID();
  const finished = ['success', 'partial', 'failed', 'cancelled'].includes(status);
  await api.db
    .insertInto('runs')
    .values({
      id,
      campaign_id: campaignId,
      tenant_id: campaign.tenant_id,
      account_id: campaign.account_id,
      trigger: 'schedule',
      status,
      parts: JSON.stringify(campaign.messages),
      total: Object.keys(targets).length,
      scheduled_at: extra.scheduledAt ?? new Date(NOW - 3_600_000 + Math.floor(Math.random() * 1_000_000)),
      started_at: status === 'queued' ? null : new Date(NOW - 3_000_000),
      finished_at: finished ? new Date(NOW - 1_000_000) : null,
      window_end_at: new Date(NOW - 500_000),
      paused_reason: status === 'paused' ? (extra.pausedReason ?? 'window_closed') : null,
      error_summary: status === 'paused' ? 'Delivery window closed at 18:00 (Asia/Kuala_Lumpur).' : null,
      job_id: `run-${id}-${extra.jobSeq ?? 0}`,
      job_seq: extra.jobSeq ?? 0,
      ...(extra.createdAt && { created_at: extra.createdAt }),
    })
    .execute();
  const entries = Object.entries(targets);
  if (entries.length > 0) {
    await api.db
      .insertInto('run_targets')
      .values(
        entries.map(([chat, s]) => ({
          run_id: id,
          chat_id: chat,
          status: s,
          attempts: s === 'pending' ? 0 : 3,
          sent_at: s === 'sent' ? new Date(NOW - 2_000_000) : null,
          error_code: s === 'failed' ? 'chat_not_found' : s === 'unknown' ? 'timeout' : null,
          error_message: s === 'failed' ? 'no such chat' : s === 'unknown' ? 'no answer' : null,
        })),
      )
      .execute();
  }
  return { id, campaignId };
}
