import { EXIT_STOP_DEADLINE, STOP_DEADLINE_MS } from '@metronome/observability';
import { createDb } from '@metronome/db';
import { startPrivatePostgres, startStack as startProcesses, type PrivatePostgres, type ServiceProcess, type Stack as Processes } from '@metronome/testkit';
import { received, repeats, startFanOut } from '../helpers/platform-record.js';
import { runsToEnd, sandbox, type Stack } from '../helpers/stack.js';
import { eventually, REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

// A stop does not wait on PostgreSQL that is gone either: a private PostgreSQL is stopped in the
// middle of a fan-out and every service but the sandbox gets SIGTERM. Each exits by itself
// within its stop deadline. What a sender could not write (answers it held) is left to the
// leases: once PostgreSQL and the services are back, every run ends, every chat the platform
// did not receive is sent, none twice, and nothing is recorded wrongly: a `sent` chat is one
// the platform received, and the only other end is `unknown` (a request was begun, its answer
// lost with the stopped process; CONTRACT §4).

const ACCOUNTS = 5;
const CHATS = 60;
const PER_MINUTE = 600;
// the leases the stopped senders leave run out 10 s after the send timeout (SENDER_HOLD_MS), not 30
const senderEnv = { SENDER_CONCURRENCY: '8', SENDER_HOLD_MS: '10000' };

let pg: PrivatePostgres;
let first: Processes | undefined;
let second: Processes | undefined;
let db: ReturnType<typeof createDb> | undefined;
const keyPrefix = uniquePrefix('pg-offline-stop');

beforeAll(async () => {
  pg = await startPrivatePostgres();
  first = await startProcesses({
    databaseUrl: pg.url,
    redisUrl: REDIS_URL,
    keyPrefix,
    senders: 2,
    senderEnv,
    sandboxEnv: { SANDBOX_LATENCY_MS: '30' },
  });
}, 120_000);
afterAll(async () => {
  await Promise.all([...(second?.services ?? []), ...(first?.services ?? [])].map((s) => s.stop('SIGKILL')));
  await db?.destroy();
  await pg?.destroy();
}, 60_000);

// the e2e helpers read the database through `stack.db`: here the private server's
const asStack = (p: Processes): Stack => ({ ...p, keyPrefix, db: { url: pg.url, name: 'metronome', db: db!, drop: async () => undefined } });

/** SIGTERM; the exit code (`running` when it never exits, far beyond the deadline) and its last stop line. */
async function stopped(service: ServiceProcess): Promise<{ name: string; code: number | null | 'running'; last: string }> {
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([service.stop('SIGTERM'), new Promise<'running'>((r) => (timer = setTimeout(() => r('running'), 45_000)))]);
  clearTimeout(timer);
  const last =
    service.output
      .filter((l) => /stopped"|stop deadline passed/.test(l))
      .map((l) => String((JSON.parse(l) as { msg: string }).msg))
      .at(-1) ?? '';
  return { name: service.name, code, last };
}

test('PostgreSQL stopped mid fan-out, SIGTERM to every service: each exits within its deadline; once it is back every run ends, no chat twice, nothing recorded wrongly', async () => {
  db = createDb({ url: pg.url, max: 2, applicationName: 'metronome-test' });
  const stack = asStack(first!);
  const { token, runIds } = await startFanOut(stack, { name: 'pg-offline', accounts: ACCOUNTS, chats: CHATS, perMinute: PER_MINUTE, groupConcurrency: 3 });
  await eventually('the fan-out to be under way', async () => ((await sandbox(stack, '/sandbox/stats')).accepted as number) >= 60, 60_000, 50);

  await pg.stop();
  await eventually('the API to see PostgreSQL gone', async () => (await fetch(`${stack.apiUrl}/readyz`)).status === 503, 10_000, 50);

  const withPostgres = stack.services.filter((s) => s.name !== 'sandbox');
  const exits = await Promise.all(withPostgres.map(stopped));
  const exitedByItself = (code: number | null | 'running') => code === 0 || code === EXIT_STOP_DEADLINE;
  expect(exits.map((e) => ({ ...e, code: exitedByItself(e.code) ? 'exited' : e.code }))).toEqual(
    withPostgres.map((s) => ({ name: s.name, code: 'exited', last: expect.stringMatching(/stopped$|stop deadline passed/) })),
  );
  expect(STOP_DEADLINE_MS).toBeLessThan(10_000);

  await pg.start();
  second = await startProcesses({
    databaseUrl: pg.url,
    redisUrl: REDIS_URL,
    keyPrefix,
    senders: 2,
    senderEnv,
    sandboxUrl: first!.sandboxUrl,
  });
  const again = asStack(second);

  // held targets come back when their leases run out (the send timeout and SENDER_HOLD_MS)
  const runs = await runsToEnd(again, token, runIds, 240_000, 1_000);
  expect(runs.filter((r) => !['success', 'partial'].includes(r.status))).toEqual([]);

  const items = await received(again);
  expect(repeats(items)).toEqual([]);
  const platform = new Set(items.map((m) => m.chatId));
  const targets = await db.selectFrom('run_targets').select(['chat_id', 'status']).execute();
  expect(targets).toHaveLength(ACCOUNTS * CHATS);
  // `sent` only for what the platform has; anything else is `unknown`, and every unknown one is
  // a request that was begun (here: that the platform received)
  expect(targets.filter((t) => t.status === 'sent' && !platform.has(t.chat_id))).toEqual([]);
  expect(targets.filter((t) => t.status !== 'sent' && t.status !== 'unknown')).toEqual([]);
  expect(targets.filter((t) => t.status === 'unknown' && !platform.has(t.chat_id))).toEqual([]);
  expect(platform.size).toBe(ACCOUNTS * CHATS);
}, 420_000);
