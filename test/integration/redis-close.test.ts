import { settledWithin } from '@metronome/observability';
import { closeRedis, createRedis } from '@metronome/redis';
import { startPrivateRedis, type PrivateRedis } from '@metronome/testkit';
import { eventually } from '../helpers/test-env.js';

// closeRedis is how every service lets go of Redis when it stops: it returns whether Redis
// answers or not, where ioredis's own quit() waits for a Redis that is gone to come back.

let server: PrivateRedis;
beforeAll(async () => {
  server = await startPrivateRedis();
}, 30_000);
afterAll(async () => server?.stop());

test('a connection whose Redis answers is closed with QUIT', async () => {
  const redis = createRedis(server.url, 'test-close');
  redis.on('error', () => undefined);
  await redis.ping();
  await closeRedis(redis);
  expect(redis.status).toBe('end');
});

test('a connection whose Redis is gone: quit() waits behind the queued commands; closeRedis fails them and ends it', async () => {
  const plain = createRedis(server.url, 'test-close-plain');
  const bounded = createRedis(server.url, 'test-close-bounded');
  for (const r of [plain, bounded]) r.on('error', () => undefined);
  await Promise.all([plain.ping(), bounded.ping()]);
  await server.kill();
  try {
    await eventually('both connections to notice', async () => plain.status === 'reconnecting' && bounded.status === 'reconnecting', 10_000, 20);
    // a command on each, left waiting for Redis (as a job's or a tick's would be)
    const waiting = [plain.get('k'), bounded.get('k')].map((p) =>
      p.then(
        () => 'answered',
        (err: Error) => `failed: ${err.message}`,
      ),
    );
    expect(await settledWithin(plain.quit(), 1_000)).toBe(false);
    await closeRedis(bounded, 5_000);
    expect(bounded.status).toBe('end');
    expect(await waiting[1]).toMatch(/^failed/);
  } finally {
    await closeRedis(plain, 5_000);
    await server.restart();
  }
}, 30_000);
