import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '@metronome/core';
import { createDb, type DB } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import { RunQueue } from '@metronome/queue';
import { createRedis, redisKeys } from '@metronome/redis';
import { freePort, startService } from '@metronome/testkit';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { buildApp } from '../../services/control-api/src/app.js';
import { eventually } from '../helpers/test-env.js';
import { ADMIN_TOKEN, apiForFile, createCampaign, NOW, seedRun, tenantForFile } from './harness.js';
import { startTcpProxy, viaProxy, type TcpProxy } from './tcp-proxy.js';

// Operations over real listening servers: /readyz follows PostgreSQL and Redis going away and
// coming back (through a TCP proxy the test cuts), a second API replica streams a change made
// through the first, and SIGTERM lets an in-flight request finish.

const api = apiForFile('api_graceful');
const tenant = tenantForFile(api, 'graceful');

/** Another API process's worth of connections and app on the same database and Redis prefix. */
interface Replica {
  app: FastifyInstance;
  url: string;
  db: Kysely<DB>;
  redis: Redis;
  close(): Promise<void>;
}

async function startReplica(databaseUrl: string, redisUrl: string): Promise<Replica> {
  const db = createDb({ url: databaseUrl, max: 3, applicationName: 'metronome-api' });
  // Retry quickly while the proxy is cut, so recovery is seen soon after it is restored.
  const redis = createRedis(redisUrl, 'test-replica', { retryStrategy: () => 50 });
  redis.on('error', () => undefined);
  const queue = new RunQueue(redis, redisKeys(api.config.keyPrefix).queuePrefix);
  queue.queue.on('error', () => undefined); // as server.ts: the redis listener has them
  const app = await buildApp({
    config: { ...api.config, databaseUrl, redisUrl },
    db,
    redis,
    queue,
    clock: new ManualClock(NOW),
    logger: createLogger('control-api-replica', 'silent'),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    app,
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    db,
    redis,
    close: async () => {
      await app.close();
      await queue.close();
      redis.disconnect();
      await db.destroy();
    },
  };
}

async function get(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

describe('/readyz follows its dependencies', () => {
  let pgProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let replica: Replica;
  beforeAll(async () => {
    const pg = new URL(api.config.databaseUrl);
    const redis = new URL(api.config.redisUrl);
    pgProxy = await startTcpProxy(pg.hostname, Number(pg.port || 5432));
    redisProxy = await startTcpProxy(redis.hostname, Number(redis.port || 6379));
    replica = await startReplica(viaProxy(api.config.databaseUrl, pgProxy), viaProxy(api.config.redisUrl, redisProxy));
  }, 30_000);
  afterAll(async () => {
    await replica.close();
    await pgProxy.close();
    await redisProxy.close();
  });

  test('Redis unreachable → 503 naming it; back → 200 by itself', async () => {
    expect(await get(`${replica.url}/readyz`)).toEqual({ status: 200, body: { ok: true, postgres: true, redis: true } });
    await redisProxy.cut();
    expect(await get(`${replica.url}/readyz`)).toEqual({
      status: 503,
      body: { ok: false, postgres: true, redis: false, reason: expect.stringMatching(/^redis: /) },
    });
    // Reading state does not need Redis: the per-token limit fails open instead of holding requests.
    const me = await fetch(`${replica.url}/v1/me`, { headers: { authorization: `Bearer ${tenant.token}` } });
    expect(me.status).toBe(200);
    await redisProxy.restore();
    await eventually('ready again', async () => (await get(`${replica.url}/readyz`)).status === 200, 15_000, 100);
  }, 30_000);

  test('PostgreSQL unreachable → 503 naming it; back → 200 by itself', async () => {
    await pgProxy.cut();
    // A query on a connection checked out as PostgreSQL goes away fails with its own error;
    // the process does not crash (libs/db createDb listens for errors on every client).
    expect(await get(`${replica.url}/readyz`)).toEqual({
      status: 503,
      body: { ok: false, postgres: false, redis: true, reason: expect.stringMatching(/^postgres: /) },
    });
    await pgProxy.restore();
    await eventually('ready again', async () => (await get(`${replica.url}/readyz`)).status === 200, 15_000, 100);
    // and the API works again, not only the probe
    const res = await fetch(`${replica.url}/v1/me`, { headers: { authorization: `Bearer ${tenant.token}` } });
    expect(res.status).toBe(200);
  }, 30_000);
});

test('two replicas: a change made through replica 1 streams on replica 2', async () => {
  const one = await startReplica(api.config.databaseUrl, api.config.redisUrl);
  const two = await startReplica(api.config.databaseUrl, api.config.redisUrl);
  const received: string[] = [];
  const req = http.get(`${two.url}/v1/events`, { headers: { authorization: `Bearer ${tenant.token}` } });
  try {
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      req.on('response', resolve);
      req.on('error', reject);
    });
    expect(res.statusCode).toBe(200);
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => received.push(chunk));
    res.on('error', () => undefined);

    const { id: campaignId } = await createCampaign(api, tenant);
    const run = await seedRun(api, campaignId, 'running', { a: 'pending', b: 'sent' });
    const paused = await fetch(`${one.url}/v1/runs/${run.id}/pause`, { method: 'POST', headers: { authorization: `Bearer ${tenant.token}` } });
    expect(paused.status).toBe(202);
    const event = await eventually(
      'the pause on replica 2',
      async () => {
        const frames = received.join('').split('\n\n');
        return frames.find((f) => f.includes('event: run') && f.includes(run.id) && f.includes('"status":"paused"'));
      },
      10_000,
      20,
    );
    expect(event).toContain('Reminder paused');
  } finally {
    req.destroy();
    await one.close();
    await two.close();
  }
}, 30_000);

test('SIGTERM: the API stops taking new work, finishes the request in flight and exits 0', async () => {
  const port = await freePort();
  const proc = startService('control-api', 'services/control-api/dist/server.js', {
    DATABASE_URL: api.config.databaseUrl,
    REDIS_URL: api.config.redisUrl,
    KEY_PREFIX: api.config.keyPrefix,
    PORT: String(port),
    ADMIN_TOKEN,
    LOG_LEVEL: 'info',
  });
  try {
    await proc.waitForLog((l) => l['msg'] === 'control-api listening');
    // An upload whose body arrives in two halves: SIGTERM lands between them.
    const bytes = Buffer.alloc(64 * 1024, 7);
    const req = http.request(`http://127.0.0.1:${port}/v1/media?filename=slow.bin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) },
    });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
    req.write(bytes.subarray(0, bytes.length / 2));
    await proc.waitForLog((l) => l['msg'] === 'incoming request' && String((l['req'] as { url?: string })?.url).startsWith('/v1/media'));
    const exited = proc.stop('SIGTERM');
    await proc.waitForLog((l) => l['msg'] === 'control-api stopping');
    // A new connection is refused once stopping has begun.
    await eventually(
      'new connections refused',
      async () =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          () => false,
          () => true,
        ),
      5_000,
      20,
    );
    req.end(bytes.subarray(bytes.length / 2));
    const res = await answer;
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ filename: 'slow.bin', size: bytes.length });
    expect(await exited).toBe(0);
  } finally {
    await proc.stop('SIGKILL');
  }
}, 30_000);
