import type { FastifyInstance } from 'fastify';
import { bearerKey } from './api-keys.js';
import { buildSandbox } from './app.js';

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildSandbox({
    config: { limits: { latencyMs: 0, maxPerMinute: 0, burst: 1, slowModeSeconds: 0, faultRate: 0 }, seed: 1 },
    sleep: async () => undefined,
  });
});
afterEach(async () => app.close());

let seq = 0;
const send = async (account: string, authorization?: string) => {
  const res = await app.inject({
    method: 'POST',
    url: `/v1/accounts/${account}/messages`,
    headers: { ...(authorization !== undefined && { authorization }), 'idempotency-key': `r:c:${++seq}` },
    payload: { chatId: 'c', part: { type: 'text', text: 'hi' }, partIndex: 0, partCount: 1 },
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
};
const put = (url: string, payload: object) => app.inject({ method: 'PUT', url, payload });
const accepted = async (account: string) => (await app.inject({ method: 'GET', url: `/sandbox/messages?account=${account}` })).json().items.length as number;

test('the first request registers the key; another key, or none, is 401 unauthorized and delivers nothing', async () => {
  expect((await send('a', 'Bearer key-a-000000000001')).status).toBe(200);
  expect(await send('a', 'Bearer key-c-000000000001')).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  expect(await send('a')).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  expect(await send('a', 'Basic key-a-000000000001')).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  expect((await send('a', 'bearer key-a-000000000001')).status).toBe(200);
  expect(await accepted('a')).toBe(2);
  // an account nobody has used still needs a key
  expect(await send('b')).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
});

test('a key set ahead is the only one accepted; null forgets it; reset forgets every key', async () => {
  expect((await put('/sandbox/accounts/a', { apiKey: 'preset-key-000000001' })).json()).toMatchObject({ hasApiKey: true });
  expect((await send('a', 'Bearer first-comer-000000001')).status).toBe(401);
  expect((await send('a', 'Bearer preset-key-000000001')).status).toBe(200);
  await put('/sandbox/accounts/a', { apiKey: null });
  expect((await send('a', 'Bearer another-key-00000001')).status).toBe(200);
  await app.inject({ method: 'POST', url: '/sandbox/reset' });
  expect((await send('a', 'Bearer third-key-000000001')).status).toBe(200);
});

test('the fake echo fault answers 500 quoting the Authorization header, only after the key check', async () => {
  expect((await send('a', 'Bearer key-a-000000000001')).status).toBe(200);
  expect((await put('/sandbox/accounts/a', { fakeEchoAuthorization: true })).json()).toMatchObject({ fakeEchoAuthorization: true });
  const echoed = await send('a', 'Bearer key-a-000000000001');
  expect(echoed).toMatchObject({ status: 500, body: { error: 'internal_error' } });
  expect(echoed.body['message']).toContain('key-a-000000000001');
  expect(echoed.body['detail']).toContain('key-a-000000000001');
  expect((await send('a', 'Bearer wrong-key-00000000001')).status).toBe(401);
  await put('/sandbox/accounts/a', { fakeEchoAuthorization: false });
  expect((await send('a', 'Bearer key-a-000000000001')).status).toBe(200);
});

test('bearerKey reads only a Bearer header with one token', () => {
  expect(bearerKey('Bearer abc')).toBe('abc');
  expect(bearerKey('bearer  abc ')).toBe('abc');
  expect(bearerKey('Bearer')).toBeNull();
  expect(bearerKey('Bearer a b')).toBeNull();
  expect(bearerKey(undefined)).toBeNull();
  expect(bearerKey(['Bearer a'])).toBeNull();
});
