import { Registry } from 'prom-client';
import { startMetricsServer } from './metrics-server.js';
import { readinessOf } from './readiness.js';

// /readyz of the services without an HTTP API: each dependency's verdict, and why when one fails.

test('every check ready: ok, each named true, no reason', async () => {
  expect(await readinessOf({ postgres: async () => null, redis: async () => null })).toEqual({ ok: true, postgres: true, redis: true });
});

test("a check's reason, or its error, is named with the check; the others still answer", async () => {
  const answer = await readinessOf({
    postgres: async () => {
      throw new Error('connect ECONNREFUSED');
    },
    redis: async () => 'the cluster does not serve the slot of {mtr}',
    queue: async () => null,
  });
  expect(answer).toEqual({
    ok: false,
    postgres: false,
    redis: false,
    queue: true,
    reason: 'postgres: connect ECONNREFUSED; redis: the cluster does not serve the slot of {mtr}',
  });
});

test('the metrics server answers /readyz 200 or 503 with the body, /healthz as before', async () => {
  let redis: string | null = null;
  const server = await startMetricsServer(new Registry(), 0, '127.0.0.1', undefined, () => readinessOf({ redis: async () => redis }));
  try {
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${server.port}${path}`);
      return { status: res.status, body: await res.json() };
    };
    expect(await get('/readyz')).toEqual({ status: 200, body: { ok: true, redis: true } });
    redis = 'no answer within 1000 ms';
    expect(await get('/readyz')).toEqual({ status: 503, body: { ok: false, redis: false, reason: 'redis: no answer within 1000 ms' } });
    expect(await get('/healthz')).toEqual({ status: 200, body: { ok: true } });
  } finally {
    await server.close();
  }
});
