import { sql } from 'kysely';
import { createDb } from '@metronome/db';
import { startPrivatePostgres, startStack as startProcesses, type PrivatePostgres, type Stack as Processes } from '@metronome/testkit';
import { paceBreaches, received, repeats, startFanOut } from '../helpers/platform-record.js';
import { runsToEnd, sandbox, type Stack } from '../helpers/stack.js';
import { eventually, REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

// A known answer is never dropped: PostgreSQL (a server of this test's own) is stopped for 10 s
// in the middle of a 1,000-chat fan-out over 10 accounts and started again. The senders keep the
// answers they hold and write them once it is back; nothing is recorded `unknown`, nothing is
// sent twice, every run ends `success`, no service exits, and the API's first readiness probe
// after the restart answers ready.

const ACCOUNTS = 10;
const CHATS = 100;
const PER_MINUTE = 600;
const OUTAGE_MS = 10_000;

let pgServer: PrivatePostgres;
let processes: Processes;
let stack: Stack;
beforeAll(async () => {
  pgServer = await startPrivatePostgres();
  const keyPrefix = uniquePrefix('pg-outage');
  processes = await startProcesses({
    databaseUrl: pgServer.url,
    redisUrl: REDIS_URL,
    keyPrefix,
    senders: 2,
    senderEnv: { SENDER_CONCURRENCY: '8' },
    sandboxEnv: { SANDBOX_LATENCY_MS: '30' },
  });
  // the e2e helpers read the database through `stack.db`; this one is on the private server
  const db = createDb({ url: pgServer.url, max: 2, applicationName: 'metronome-test' });
  stack = { ...processes, keyPrefix, db: { url: pgServer.url, name: 'metronome', db, drop: () => db.destroy() } };
}, 120_000);
afterAll(async () => {
  await processes?.stop().catch(() => undefined);
  await stack?.db.drop();
  await pgServer?.destroy();
}, 60_000);

test('PostgreSQL stopped 10 s mid fan-out: every answer written once it is back, none unknown, none twice, every run a success', async () => {
  const { token, runIds } = await startFanOut(stack, { name: 'outage', accounts: ACCOUNTS, chats: CHATS, perMinute: PER_MINUTE, groupConcurrency: 3 });

  // mid fan-out: a few seconds of sending (about a third of each account's 100 chats)
  await eventually('the fan-out to be under way', async () => ((await sandbox(stack, '/sandbox/stats')).accepted as number) >= 300, 60_000, 50);
  await pgServer.stop();
  const stoppedAt = Date.now();
  const duringOutage = (await sandbox(stack, '/sandbox/stats')).accepted as number;
  await new Promise((r) => setTimeout(r, OUTAGE_MS - (Date.now() - stoppedAt)));
  // the fan-out went on for a moment (requests already written) and then stopped claiming
  const stalled = (await sandbox(stack, '/sandbox/stats')).accepted as number;
  // each lane writes at most the one request it had claimed before the stop
  expect(stalled - duringOutage).toBeLessThanOrEqual(ACCOUNTS * 3);
  expect((await fetch(`${stack.apiUrl}/readyz`)).status).toBe(503);
  await pgServer.start();
  const backAt = Date.now();
  // ready again at once: the first probe after the server accepts connections answers 200 — no
  // backoff, no remembered failure. (A count of probes, not a wall-clock bound: under CI load a
  // fresh connection alone has taken over a second.)
  const firstProbe = await fetch(`${stack.apiUrl}/readyz`);
  expect({ status: firstProbe.status, body: await firstProbe.json(), afterMs: Date.now() - backAt }).toMatchObject({ status: 200 });

  const runs = await runsToEnd(stack, token, runIds, 120_000, 500);
  expect(runs.map((r) => r.status)).toEqual(runIds.map(() => 'success'));
  const unknown = await stack.db.db
    .selectFrom('run_targets')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('status', '<>', 'sent')
    .executeTakeFirstOrThrow();
  expect(unknown.n).toBe(0);

  // the platform's record: every chat exactly once, never faster than the pace
  const items = await received(stack);
  expect(repeats(items)).toEqual([]);
  expect(new Set(items.map((m) => `${m.account}|${m.chatId}`)).size).toBe(ACCOUNTS * CHATS);
  expect(items).toHaveLength(ACCOUNTS * CHATS);
  // (a breach says when its window began against the stop and the restart)
  expect(paceBreaches(items, PER_MINUTE, 1).map((b) => ({ ...b, afterStopMs: b.from - stoppedAt, afterRestartMs: b.from - backAt }))).toEqual([]);

  // no service exited through the outage
  expect(stack.services.filter((s) => s.child.exitCode !== null || s.child.signalCode !== null).map((s) => s.name)).toEqual([]);
  // the senders held answers through it and wrote them after
  const heldAnswers = stack.senders.flatMap((s) => s.output).filter((l) => l.includes('answer written after the database came back'));
  expect(heldAnswers.length).toBeGreaterThan(0);
}, 240_000);
