import { apiCall, sandboxGet, startPrivateRedis, startStack, type PrivateRedis, type Stack } from '@metronome/testkit';
import { RunQueue } from '@metronome/queue';
import { createRedis, redisKeys } from '@metronome/redis';
import { createTestDatabase, eventually, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';

// Redis is disposable, even when it dies: a private redis-server is killed with SIGKILL while
// runs are sending and waiting, and started again empty on the same port. Every open run has a
// live job again within 2 s of Redis answering, and every line the scheduler and the sender
// print meanwhile is JSON.

let redis: PrivateRedis;
let tdb: TestDatabase;
let stack: Stack;
const keyPrefix = uniquePrefix('restart');

beforeAll(async () => {
  redis = await startPrivateRedis();
  tdb = await createTestDatabase('restart');
  stack = await startStack({ databaseUrl: tdb.url, redisUrl: redis.url, keyPrefix, senders: 1 });
}, 60_000);
afterAll(async () => {
  try {
    await stack?.stop();
  } finally {
    await tdb?.drop();
    await redis?.stop();
  }
}, 60_000);

const call = <T = any>(method: string, path: string, token: string, body?: unknown) => apiCall<T>(stack.apiUrl, method, path, token, body);

/** The open runs and whether Redis holds a live job under each one's job id. */
async function openRunsAndJobs(queue: RunQueue): Promise<{ id: string; status: string; jobId: string | null; live: boolean }[]> {
  const runs = await tdb.db.selectFrom('runs').select(['id', 'status', 'job_id']).where('status', 'in', ['queued', 'running']).execute();
  const live = await queue.existing(runs.flatMap((r) => (r.job_id ? [r.job_id] : [])));
  return runs.map((r) => ({ id: r.id, status: r.status, jobId: r.job_id, live: r.job_id !== null && live.has(r.job_id) }));
}

function nonJson(lines: string[]): string[] {
  return lines.filter((line) => {
    if (line.trim() === '') return false;
    try {
      JSON.parse(line);
      return false;
    } catch {
      return true;
    }
  });
}

test('Redis killed and started again empty: every open run has a live job within 2 s of Redis answering; every log line stays JSON', async () => {
  const tenant = (await call('POST', '/v1/tenants', stack.adminToken, { name: 'restart' })).body;
  const campaigns: string[] = [];
  // Account a: two campaigns due at once, whose runs take turns on the account (each one queued
  // or running at any moment). Account b: one more run. All paced slowly enough to stay open.
  for (const [externalId, count] of [
    ['restart-a', 2],
    ['restart-b', 1],
  ] as const) {
    const account = (
      await call('POST', '/v1/accounts', tenant.token, {
        platform: 'http',
        credentials: { apiKey: 'sandbox-api-key-0001' },
        name: externalId,
        externalId,
        maxSendPerMinute: 120,
      })
    ).body;
    for (let i = 0; i < count; i++) {
      const created = await call('POST', '/v1/campaigns', tenant.token, {
        accountId: account.id,
        name: `${externalId} ${i}`,
        timezone: 'UTC',
        schedule: { type: 'once', at: new Date().toISOString() },
        messages: [{ type: 'text', text: 'hello' }],
        targets: Array.from({ length: 120 }, (_, c) => `chat-${c}`),
      });
      expect(created.status).toBe(201);
      campaigns.push(created.body.id);
    }
  }
  const received = async (account: string) => (await sandboxGet<{ items: unknown[] }>(stack.sandboxUrl, `/sandbox/messages?account=${account}`)).items.length;
  await eventually('both accounts to be sending', async () => (await received('restart-a')) >= 3 && (await received('restart-b')) >= 3, 30_000, 100);

  const observer = createRedis(redis.url, 'test-observer');
  const queue = new RunQueue(observer, redisKeys(keyPrefix).queuePrefix);
  queue.queue.on('error', () => undefined);
  try {
    await eventually(
      'three open runs, each with its job',
      async () => {
        const open = await openRunsAndJobs(queue);
        return open.length === 3 && open.every((r) => r.live) ? open : null;
      },
      10_000,
      50,
    );

    await redis.kill();
    // Both services notice the loss before Redis comes back: their error paths are exercised.
    await stack.scheduler.waitForLog((l) => l['msg'] === 'redis connection error', 10_000);
    await stack.senders[0]!.waitForLog((l) => typeof l['msg'] === 'string' && /queue error|worker error/.test(l['msg']), 10_000);
    await redis.restart(); // resolves once it answers PING: the 2 s start now

    const after = await eventually(
      'every open run to have a live job again',
      async () => {
        const open = await openRunsAndJobs(queue);
        return open.length > 0 && open.every((r) => r.live) ? open : null;
      },
      2_000,
      50,
    ).catch(async (error: Error) => {
      throw new Error(
        `${error.message}\nopen runs: ${JSON.stringify(await openRunsAndJobs(queue))}\nscheduler:\n${stack.scheduler.output.slice(-15).join('\n')}`,
      );
    });
    expect(after.length).toBeGreaterThanOrEqual(2);
    // the jobs are new: the reconciler handed each run a new job step
    const reconciled = await stack.scheduler.waitForLog((l) => l['msg'] === 'run had no live job in Redis: re-enqueued', 1_000);
    expect(reconciled['runId']).toBeDefined();

    // and the runs carry on from their new jobs
    const sentBefore = await received('restart-a');
    await eventually('sending to resume', async () => (await received('restart-a')) > sentBefore, 20_000, 100);
  } finally {
    await queue.close();
    await observer.quit();
  }

  expect(nonJson(stack.scheduler.output)).toEqual([]);
  expect(nonJson(stack.senders[0]!.output)).toEqual([]);
}, 120_000);
