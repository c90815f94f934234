import { randomUUID } from 'node:crypto';
import { hashToken, newToken } from '@metronome/core';
import { createDb } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import { createRedis } from '@metronome/redis';
import { buildApp } from '../../services/control-api/src/app.js';
import { ADMIN_TOKEN, call, createCampaign, createTenant, seedRun, startApi, type Api } from './harness.js';
import { seedTenant } from '../helpers/seed.js';

// Auth, tenants, rate limiting, the error body for unknown routes, and the unauthenticated
// operations routes.

let api: Api;
beforeAll(async () => {
  api = await startApi('api_auth');
}, 30_000);
afterAll(async () => api.close());

describe('auth', () => {
  test('a /v1 route without a token answers 401 with the error body', async () => {
    const res = await call(api, 'GET', '/v1/campaigns', null);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String), details: [] } });
  });

  test('an unknown token, or a scheme other than Bearer, is 401', async () => {
    expect((await call(api, 'GET', '/v1/me', 'not-a-token')).status).toBe(401);
    const basic = await api.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Basic ${ADMIN_TOKEN}` } });
    expect(basic.statusCode).toBe(401);
  });

  test('no token is checked before the body: a bad body without a token is still 401', async () => {
    const res = await call(api, 'POST', '/v1/campaigns', null, { nonsense: true });
    expect(res.status).toBe(401);
  });

  test('POST /v1/tenants returns the token once and stores only its hash', async () => {
    const res = await call(api, 'POST', '/v1/tenants', ADMIN_TOKEN, { name: 'Acme' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), name: 'Acme', token: expect.stringMatching(/^mtr_/), createdAt: expect.any(String) });
    const row = await api.db.selectFrom('tenants').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(hashToken(res.body.token));
    expect(JSON.stringify(row)).not.toContain(res.body.token);
  });

  test('/v1/me tells the operator from a tenant, and both the bodies they may send', async () => {
    const tenant = await createTenant(api, 'me');
    const limits = { mediaMaxBytes: api.config.mediaMaxBytes, jsonMaxBytes: 4 * 1024 * 1024 };
    expect((await call(api, 'GET', '/v1/me', ADMIN_TOKEN)).body).toEqual({ tenantId: null, admin: true, limits });
    expect((await call(api, 'GET', '/v1/me', tenant.token)).body).toEqual({ tenantId: tenant.id, admin: false, limits });
  });

  test('a tenant cannot create tenants', async () => {
    const tenant = await createTenant(api, 'not-admin');
    const res = await call(api, 'POST', '/v1/tenants', tenant.token, { name: 'sneaky' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  test('a tenant with an empty name is rejected naming the field', async () => {
    const res = await call(api, 'POST', '/v1/tenants', ADMIN_TOKEN, { name: '' });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'name', message: expect.any(String) }]);
  });
});

describe('rate limit', () => {
  let limited: Api;
  beforeAll(async () => {
    limited = await startApi('api_rate', { rateLimitPerMinute: 3 });
  }, 30_000);
  afterAll(async () => limited.close());

  // Tenants written straight to the database, so creating them spends no request.
  async function tenantToken(name: string): Promise<string> {
    const token = newToken();
    await seedTenant(limited.db, { name, token_hash: hashToken(token) });
    return token;
  }

  test('a token over API_RATE_LIMIT_PER_MINUTE gets 429 with Retry-After, others are unaffected, and it recovers', async () => {
    const busy = await tenantToken('busy');
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(limited, 'GET', '/v1/me', busy)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await call(limited, 'GET', '/v1/me', busy);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    expect((await call(limited, 'GET', '/v1/me', await tenantToken('calm'))).status).toBe(200);

    limited.clock.advance(20_000); // one request's worth at 3 per minute
    expect((await call(limited, 'GET', '/v1/me', busy)).status).toBe(200);
    expect((await call(limited, 'GET', '/v1/me', busy)).status).toBe(429);
  });
});

describe('operations', () => {
  test('unknown routes answer 404 with the error body', async () => {
    const res = await call(api, 'GET', '/v1/nothing-here', ADMIN_TOKEN);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  test('/healthz and /readyz need no token', async () => {
    expect((await call(api, 'GET', '/healthz', null)).body).toEqual({ ok: true });
    const ready = await call(api, 'GET', '/readyz', null);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ ok: true, postgres: true, redis: true });
  });

  test('/readyz answers 503 naming what does not answer', async () => {
    // Nothing listens on port 1: both probes fail.
    const db = createDb({ url: 'postgres://postgres@127.0.0.1:1/none', max: 1 });
    const redis = createRedis('redis://127.0.0.1:1', 'test-unready', { retryStrategy: () => null });
    redis.on('error', () => undefined);
    // retryStrategy null: the client gives up at once and ends by itself, nothing left to close
    // readyz asks the Redis connection itself; the queue is not involved
    const app = await buildApp({ config: api.config, db, redis, queue: api.queue, clock: api.clock, logger: createLogger('test', 'silent') });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(JSON.parse(res.body)).toEqual({ ok: false, postgres: false, redis: false, reason: expect.stringMatching(/postgres: .*redis: /) });
    } finally {
      await app.close();
      await db.destroy();
    }
  }, 15_000);

  test('/metrics shows runs by status and queue jobs by state, computed at scrape time', async () => {
    const scrape = async () => {
      const res = await api.app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('text/plain');
      return res.body;
    };
    const before = await scrape();
    expect(before).toMatch(/^metronome_runs\{status="paused",service="control-api"\} 0$/m);
    expect(before).toMatch(/^metronome_queue_jobs\{state="delayed",service="control-api"\} 0$/m);
    expect(before).toMatch(/^metronome_queue_jobs\{state="waiting",service="control-api"\} 0$/m);
    expect(before).toMatch(/^metronome_queue_jobs\{state="active",service="control-api"\} 0$/m);

    const tenant = await createTenant(api, 'metrics');
    const { id } = await createCampaign(api, tenant);
    await seedRun(api, id, 'paused', { a: 'pending' });
    await seedRun(api, id, 'success', { a: 'sent' });
    await api.queue.enqueue(randomUUID(), 0, 60_000);
    const after = await scrape();
    expect(after).toMatch(/^metronome_runs\{status="paused",service="control-api"\} 1$/m);
    expect(after).toMatch(/^metronome_runs\{status="success",service="control-api"\} 1$/m);
    expect(after).toMatch(/^metronome_queue_jobs\{state="delayed",service="control-api"\} 1$/m);
  });

  test('/openapi.json documents every route with the zod schemas', async () => {
    const res = await call(api, 'GET', '/openapi.json', null);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const path of ['/v1/tenants', '/v1/me', '/v1/accounts/{id}', '/v1/media', '/v1/campaigns/{id}/runs', '/v1/runs/{id}/retry-failed', '/v1/events']) {
      expect(res.body.paths).toHaveProperty([path]);
    }
    const create = res.body.paths['/v1/campaigns'].post;
    expect(create.security).toEqual([{ bearer: [] }]);
    expect(JSON.stringify(create.requestBody)).toContain('deliveryWindow');
    expect(res.body.components.schemas).toHaveProperty('Run');
  });

  test('/docs serves Swagger UI over /openapi.json, and only its own files', async () => {
    const page = await api.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("url: '/openapi.json'");
    const bundle = await api.app.inject({ method: 'GET', url: '/docs/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toContain('javascript');
    expect((await api.app.inject({ method: 'GET', url: '/docs/package.json' })).statusCode).toBe(404);
    expect((await api.app.inject({ method: 'GET', url: '/docs/..%2Fpackage.json' })).statusCode).toBe(404);
  });
});
