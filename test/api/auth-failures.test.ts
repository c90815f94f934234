import { hashToken, newToken } from '@metronome/core';
import type { DB } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import { createRedis } from '@metronome/redis';
import type { FastifyInstance } from 'fastify';
import type { Kysely, KyselyPlugin } from 'kysely';
import { buildApp, type AppOptions } from '../../services/control-api/src/app.js';
import type { ApiConfig } from '../../services/control-api/src/config.js';
import { KNOWN_TOKEN_MS } from '../../services/control-api/src/auth.js';
import { ADMIN_TOKEN, startApi, type Api } from './harness.js';
import { seedTenant } from '../helpers/seed.js';

// AUTH_FAILURES_PER_MINUTE: failed authentications are limited per client address, shared
// through Redis, before any token lookup; the client address comes from X-Forwarded-For only
// when the connection is from a TRUSTED_PROXIES entry. Each app here counts every statement it
// sends to PostgreSQL, and has its own Redis key prefix.

const LIMIT = 30;
let api: Api;
let tenantToken: string;
const apps: FastifyInstance[] = [];

beforeAll(async () => {
  api = await startApi('api_authfail');
  tenantToken = newToken();
  await seedTenant(api.db, { name: 'valid', token_hash: hashToken(tenantToken) });
}, 30_000);
afterAll(async () => {
  for (const app of apps) await app.close();
  await api.close();
});

interface Counted {
  app: FastifyInstance;
  /** statements sent to PostgreSQL so far */
  queries: () => number;
}

let prefixes = 0;
async function limitedApp(overrides: Partial<ApiConfig> = {}, redis = api.redis, options: AppOptions = {}): Promise<Counted> {
  let queries = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      queries++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const db: Kysely<DB> = api.db.withPlugin(plugin);
  const config: ApiConfig = { ...api.config, keyPrefix: `${api.prefix}-${++prefixes}`, authFailuresPerMinute: LIMIT, ...overrides };
  const app = await buildApp({ config, db, redis, queue: api.queue, clock: api.clock, logger: createLogger('test', 'silent') }, options);
  apps.push(app);
  return { app, queries: () => queries };
}

async function me(app: FastifyInstance, remoteAddress: string, token: string | null, headers: Record<string, string> = {}) {
  const res = await app.inject({
    method: 'GET',
    url: '/v1/me',
    remoteAddress,
    headers: { ...(token !== null && { authorization: `Bearer ${token}` }), ...headers },
  });
  return { status: res.statusCode, body: JSON.parse(res.body), retryAfter: res.headers['retry-after'] };
}

test('1,000 distinct well-formed wrong tokens from one address: 401 up to the limit, then 429 with Retry-After, and no more lookups than the limit', async () => {
  const { app, queries } = await limitedApp();
  const statuses: number[] = [];
  let refused: Awaited<ReturnType<typeof me>> | undefined;
  for (let i = 0; i < 1000; i++) {
    const res = await me(app, '203.0.113.7', newToken());
    statuses.push(res.status);
    if (res.status === 429) refused = res;
  }
  expect(statuses.slice(0, LIMIT).every((s) => s === 401)).toBe(true);
  expect(statuses.slice(LIMIT).every((s) => s === 429)).toBe(true);
  expect(refused?.body).toEqual({ error: { code: 'rate_limited', message: expect.any(String), details: [] } });
  expect(Number(refused?.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(queries()).toBe(LIMIT);

  // the limit is per address: another one is unaffected, a valid token from this one is refused too
  expect((await me(app, '203.0.113.8', tenantToken)).status).toBe(200);
  expect((await me(app, '203.0.113.8', newToken())).status).toBe(401);
  expect((await me(app, '203.0.113.7', tenantToken)).status).toBe(429);
  expect((await me(app, '203.0.113.7', ADMIN_TOKEN)).status).toBe(429);
  expect((await me(app, '203.0.113.7', null)).status).toBe(429);

  // one failure's worth of allowance comes back every 60/LIMIT s
  api.clock.advance(60_000 / LIMIT);
  expect((await me(app, '203.0.113.7', tenantToken)).status).toBe(200);
}, 60_000);

// What this checks is the limit's counting under concurrency, so its Redis gets time to answer:
// on a busy machine Redis itself can take longer than the default 500 ms for a thousand calls at
// once, and the limit then fails open, as it is meant to while Redis does not answer (tested below).
test('1,000 wrong tokens at once from one address: still no more lookups than the limit', async () => {
  const { app, queries } = await limitedApp({}, api.redis, { limitsTimeoutMs: 20_000 });
  const statuses = await Promise.all(Array.from({ length: 1000 }, () => me(app, '203.0.113.9', newToken()).then((r) => r.status)));
  expect(statuses.filter((s) => s === 401)).toHaveLength(LIMIT);
  expect(statuses.filter((s) => s === 429)).toHaveLength(1000 - LIMIT);
  expect(queries()).toBe(LIMIT);
}, 60_000);

test('a token that cannot be ours by its shape is refused without a query, and counts as a failure; so does a missing one', async () => {
  const { app, queries } = await limitedApp();
  const shapes = ['not-a-token', `mtr_${'a'.repeat(31)}`, `mtr_${'a'.repeat(33)}`, `mtr_${'a'.repeat(31)}!`, `xyz_${'a'.repeat(32)}`];
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT; i++) {
    const token = i % 6 === 5 ? null : shapes[i % 6]!;
    statuses.push((await me(app, '198.51.100.1', token)).status);
  }
  expect(statuses).toEqual(Array(LIMIT).fill(401));
  expect(queries()).toBe(0);
  expect((await me(app, '198.51.100.1', 'not-a-token')).status).toBe(429);
  expect((await me(app, '198.51.100.1', tenantToken)).status).toBe(429);
  expect(queries()).toBe(0);
});

test('valid tokens never use up the allowance: failures are counted alone', async () => {
  const { app } = await limitedApp();
  for (let i = 0; i < 3 * LIMIT; i++) expect((await me(app, '198.51.100.2', i % 2 ? tenantToken : ADMIN_TOKEN)).status).toBe(200);
  const statuses: number[] = [];
  for (let i = 0; i <= LIMIT; i++) statuses.push((await me(app, '198.51.100.2', newToken())).status);
  expect(statuses).toEqual([...Array(LIMIT).fill(401), 429]);
});

test('a valid token is looked up once, then known for KNOWN_TOKEN_MS; an address over its failure limit is refused even with it', async () => {
  const { app, queries } = await limitedApp();
  // GET /v1/me answers from the caller alone: the token's lookup is its only statement
  expect((await me(app, '198.51.100.5', tenantToken)).status).toBe(200);
  expect(queries()).toBe(1);
  for (let i = 0; i < 5; i++) expect((await me(app, '198.51.100.5', tenantToken)).status).toBe(200);
  expect(queries()).toBe(1);
  api.clock.advance(KNOWN_TOKEN_MS + 1);
  expect((await me(app, '198.51.100.5', tenantToken)).status).toBe(200);
  expect(queries()).toBe(2);
  for (let i = 0; i < LIMIT; i++) await me(app, '198.51.100.5', newToken());
  expect((await me(app, '198.51.100.5', tenantToken)).status).toBe(429);
  expect(queries()).toBe(2 + LIMIT);
});

test('X-Forwarded-For is ignored without TRUSTED_PROXIES', async () => {
  const { app } = await limitedApp();
  for (let i = 0; i < LIMIT; i++) await me(app, '192.0.2.10', newToken(), { 'x-forwarded-for': `192.0.2.${100 + i}` });
  // every failure was counted against the connection's address, whatever the header said
  expect((await me(app, '192.0.2.10', tenantToken, { 'x-forwarded-for': '192.0.2.99' })).status).toBe(429);
  expect((await me(app, '192.0.2.11', tenantToken, { 'x-forwarded-for': '192.0.2.10' })).status).toBe(200);
});

test('from a trusted proxy, X-Forwarded-For names the client; from anyone else it is ignored', async () => {
  const { app } = await limitedApp({ trustedProxies: ['10.0.0.1', '10.1.0.0/16'] });
  for (let i = 0; i < LIMIT; i++) await me(app, '10.0.0.1', newToken(), { 'x-forwarded-for': '192.0.2.50' });
  expect((await me(app, '10.0.0.1', tenantToken, { 'x-forwarded-for': '192.0.2.50' })).status).toBe(429);
  // the same client through another trusted proxy (a range) is the same client
  expect((await me(app, '10.1.2.3', tenantToken, { 'x-forwarded-for': '192.0.2.50' })).status).toBe(429);
  // another client behind the same proxy, and the proxy itself, are unaffected
  expect((await me(app, '10.0.0.1', tenantToken, { 'x-forwarded-for': '192.0.2.51' })).status).toBe(200);
  expect((await me(app, '10.0.0.1', tenantToken)).status).toBe(200);
  // an untrusted sender cannot pose as the limited client, nor escape its own limit by naming another
  expect((await me(app, '10.2.0.1', tenantToken, { 'x-forwarded-for': '192.0.2.50' })).status).toBe(200);
  for (let i = 0; i < LIMIT; i++) await me(app, '10.2.0.1', newToken(), { 'x-forwarded-for': `192.0.2.${i}` });
  expect((await me(app, '10.2.0.1', tenantToken, { 'x-forwarded-for': '192.0.2.200' })).status).toBe(429);
});

test('the limit is shared by every replica through Redis', async () => {
  const prefix = `${api.prefix}-shared`;
  const one = await limitedApp({ keyPrefix: prefix });
  const two = await limitedApp({ keyPrefix: prefix });
  for (let i = 0; i < LIMIT; i++) expect((await me(i % 2 ? one.app : two.app, '198.51.100.3', newToken())).status).toBe(401);
  expect((await me(one.app, '198.51.100.3', newToken())).status).toBe(429);
  expect((await me(two.app, '198.51.100.3', newToken())).status).toBe(429);
  expect(one.queries() + two.queries()).toBe(LIMIT);
});

test('over a real socket, the connection address is limited', async () => {
  const { app, queries } = await limitedApp();
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const statuses: number[] = [];
  let retryAfter: string | null = null;
  for (let i = 0; i < LIMIT + 5; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${newToken()}`, 'x-forwarded-for': `192.0.2.${i}` } });
    statuses.push(res.status);
    if (res.status === 429) retryAfter = res.headers.get('retry-after');
    await res.arrayBuffer();
  }
  expect(statuses).toEqual([...Array(LIMIT).fill(401), ...Array(5).fill(429)]);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(queries()).toBe(LIMIT);
});

test('while Redis does not answer, the limit fails open: tokens are checked as usual', async () => {
  // nothing listens on port 1: every limiter call fails at once
  const redis = createRedis('redis://127.0.0.1:1', 'test-auth-no-redis', { retryStrategy: () => null });
  redis.on('error', () => undefined);
  const { app } = await limitedApp({}, redis);
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT + 10; i++) statuses.push((await me(app, '198.51.100.4', newToken())).status);
  expect(statuses).toEqual(Array(LIMIT + 10).fill(401));
  expect((await me(app, '198.51.100.4', tenantToken)).status).toBe(200);
});
