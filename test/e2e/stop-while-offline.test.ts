import { EXIT_STOP_DEADLINE, STOP_DEADLINE_MS } from '@metronome/observability';
import { startPrivateRedis, startStack as startProcesses, type PrivateRedis, type ServiceProcess, type Stack as Processes } from '@metronome/testkit';
import { received, repeats, startFanOut } from '../helpers/platform-record.js';
import { runsToEnd, sandbox, type Stack } from '../helpers/stack.js';
import { createTestDatabase, eventually, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';

// A stop does not wait on a dependency that is gone: a private Redis is killed in the middle of
// a fan-out and every service but the sandbox (the platform, which has no Redis) gets SIGTERM.
// Each exits by itself, within its stop deadline (under 10 s), having written what it could.
// Then Redis comes back empty, the services start again, and every run ends `success` with no
// chat sent twice, as the platform recorded it.

const ACCOUNTS = 5;
const CHATS = 100;
const PER_MINUTE = 600;

let redis: PrivateRedis;
let tdb: TestDatabase;
let first: Processes | undefined;
let second: Processes | undefined;
const keyPrefix = uniquePrefix('offline-stop');

beforeAll(async () => {
  redis = await startPrivateRedis();
  tdb = await createTestDatabase('offline_stop');
  first = await startProcesses({
    databaseUrl: tdb.url,
    redisUrl: redis.url,
    keyPrefix,
    senders: 2,
    senderEnv: { SENDER_CONCURRENCY: '8' },
    sandboxEnv: { SANDBOX_LATENCY_MS: '30' },
  });
}, 120_000);
afterAll(async () => {
  await Promise.all([...(second?.services ?? []), ...(first?.services ?? [])].map((s) => s.stop('SIGKILL')));
  await tdb?.drop();
  await redis?.stop();
}, 60_000);

const asStack = (p: Processes): Stack => ({ ...p, keyPrefix, db: tdb });

/**
 * SIGTERM, then the exit code and the service's own account of its stop. The wait is bounded
 * far beyond the deadline (a loaded machine is slow, not stuck): `running` when it never exits.
 */
async function stopped(
  service: ServiceProcess,
): Promise<{ name: string; code: number | null | 'running'; deadlineMs: unknown; last: string; withinDeadline: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([service.stop('SIGTERM'), new Promise<'running'>((r) => (timer = setTimeout(() => r('running'), 45_000)))]);
  clearTimeout(timer);
  const parsed = service.output.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
  const stopping = parsed.find((l) => typeof l['signal'] === 'string' && 'deadlineMs' in l);
  const ending = parsed.filter((l) => /stopped$|stop deadline passed|close failed/.test(String(l['msg']))).at(-1);
  // timed by the service's own log: from `stopping` to its last word, the deadline and a moment to exit
  const tookMs = Date.parse(String(ending?.['time'])) - Date.parse(String(stopping?.['time'])); // ISO times
  const withinDeadline = Number.isFinite(tookMs) && tookMs <= Number(stopping?.['deadlineMs']) + 1_000;
  return { name: service.name, code, deadlineMs: stopping?.['deadlineMs'], last: String(ending?.['msg'] ?? ''), withinDeadline };
}

test('Redis killed mid fan-out, SIGTERM to every service: each exits within its deadline; once Redis and the services are back every run ends success, no chat twice', async () => {
  const stack = asStack(first!);
  const { token, runIds } = await startFanOut(stack, { name: 'offline', accounts: ACCOUNTS, chats: CHATS, perMinute: PER_MINUTE, groupConcurrency: 3 });
  await eventually('the fan-out to be under way', async () => ((await sandbox(stack, '/sandbox/stats')).accepted as number) >= 100, 60_000, 50);

  await redis.kill();
  // every service that uses Redis has seen it go before the signal: the stop happens offline
  await stack.scheduler.waitForLog((l) => l['msg'] === 'redis connection error', 10_000);
  for (const sender of stack.senders)
    await sender.waitForLog((l) => typeof l['msg'] === 'string' && /queue error|worker error|redis connection error/.test(l['msg']), 10_000);

  const withRedis = stack.services.filter((s) => s.name !== 'sandbox');
  const exits = await Promise.all(withRedis.map(stopped));
  // exited by themselves (no SIGKILL: the signal would be in `code` as null), with the deadline
  // under the 10 s an orchestrator gives
  const exitedByItself = (code: number | null | 'running') => code === 0 || code === EXIT_STOP_DEADLINE;
  expect(exits.map((e) => ({ ...e, code: exitedByItself(e.code) ? 'exited' : e.code }))).toEqual(
    withRedis.map((s) => ({
      name: s.name,
      code: 'exited',
      deadlineMs: STOP_DEADLINE_MS,
      last: expect.stringMatching(/stopped$|stop deadline passed/),
      withinDeadline: true,
    })),
  );
  expect(STOP_DEADLINE_MS).toBeLessThan(10_000);

  // Redis back, empty; the services start again beside the same platform
  await redis.restart();
  second = await startProcesses({
    databaseUrl: tdb.url,
    redisUrl: redis.url,
    keyPrefix,
    senders: 2,
    senderEnv: { SENDER_CONCURRENCY: '8' },
    sandboxUrl: first!.sandboxUrl,
  });
  const again = asStack(second);

  const runs = await runsToEnd(again, token, runIds, 180_000, 500);
  expect(runs.map((r) => r.status)).toEqual(runIds.map(() => 'success'));
  const notSent = await tdb.db.selectFrom('run_targets').select(['chat_id', 'status']).where('status', '<>', 'sent').execute();
  expect(notSent).toEqual([]);

  // the platform's record: every chat exactly once
  const items = await received(again);
  expect(repeats(items)).toEqual([]);
  expect(new Set(items.map((m) => `${m.account}|${m.chatId}`)).size).toBe(ACCOUNTS * CHATS);
  expect(items).toHaveLength(ACCOUNTS * CHATS);
}, 360_000);
