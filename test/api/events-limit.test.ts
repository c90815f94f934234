import type { AddressInfo } from 'node:net';
import { createLogger } from '@metronome/observability';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../services/control-api/src/app.js';
import { openEventStream, type EventStream } from '../helpers/sse-client.js';
import { eventually } from '../helpers/test-env.js';
import { ADMIN_TOKEN, createTenant, startApi, type Api, type Tenant } from './harness.js';

// SSE_MAX_PER_TOKEN (default 10): concurrent /v1/events streams of one token, counted across
// two API replicas sharing one Redis prefix, over real connections.

let api: Api;
let replica: FastifyInstance;
let bases: [string, string];
let a: Tenant;
let b: Tenant;
const streams: EventStream[] = [];

beforeAll(async () => {
  api = await startApi('api_sse_limit');
  replica = await buildApp({ config: api.config, db: api.db, redis: api.redis, queue: api.queue, clock: api.clock, logger: createLogger('test', 'silent') });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  await replica.listen({ port: 0, host: '127.0.0.1' });
  const url = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  bases = [url(api.app), url(replica)];
  a = await createTenant(api, 'A');
  b = await createTenant(api, 'B');
}, 30_000);
afterAll(async () => {
  for (const s of streams) s.close();
  await replica.close();
  await api.close();
});

async function open(token: string, replicaIndex: 0 | 1): Promise<EventStream> {
  const stream = await openEventStream(bases[replicaIndex], token);
  streams.push(stream);
  return stream;
}

async function refusal(token: string, replicaIndex: 0 | 1) {
  const res = await fetch(`${bases[replicaIndex]}/v1/events`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

test('the 11th concurrent stream of one token is a 429 on any replica; closing one frees its slot; other tokens are unaffected', async () => {
  const held: EventStream[] = [];
  for (let i = 0; i < 10; i++) {
    const s = await open(a.token, i % 2 === 0 ? 0 : 1);
    expect(s.status).toBe(200);
    held.push(s);
  }
  for (const index of [0, 1] as const) {
    const refused = await refusal(a.token, index);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { code: 'rate_limited', message: expect.any(String), details: [] } });
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
  }
  // another tenant, and the admin, count their own streams
  expect((await open(b.token, 0)).status).toBe(200);
  expect((await open(ADMIN_TOKEN, 1)).status).toBe(200);

  held[3]!.close();
  const reopened = await eventually(
    'the closed stream to free its slot',
    async () => {
      const s = await open(a.token, 1);
      return s.status === 200 ? s : (s.close(), null);
    },
    5_000,
    50,
  );
  expect(reopened.status).toBe(200);
  expect((await refusal(a.token, 0)).status).toBe(429);
}, 30_000);
