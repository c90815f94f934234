import pg from 'pg';
import { startService, type ServiceProcess } from '@metronome/testkit';
import { api, startStack, type Stack } from '../helpers/stack.js';
import { eventually, REDIS_URL } from '../helpers/test-env.js';

// High availability with real processes: two schedulers on one database and Redis prefix. The
// leader is caught in the middle of a tick (its tick transaction open, waiting on a lock the
// test holds), killed with SIGKILL, and the standby takes over; no occurrence gets two runs and
// none is skipped.

// test/helpers/stack.ts runs its scheduler at 200 ms ticks; the standby uses the same.
const TICK_MS = 200;
let stack: Stack;
let standby: ServiceProcess | undefined;

beforeAll(async () => {
  stack = await startStack({ senders: 1 });
}, 60_000);
afterAll(async () => {
  await standby?.stop();
  await stack?.stop();
}, 60_000);

test('the leader killed mid-tick: the standby leads within two ticks of the lease ending, no duplicate or skipped run', async () => {
  const tenant = (await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'ha' })).body;
  const accounts = [];
  for (let i = 0; i < 5; i++) {
    accounts.push(
      (
        await api(stack, 'POST', '/v1/accounts', tenant.token, {
          platform: 'http',
          credentials: { apiKey: 'sandbox-api-key-0001' },
          name: `a${i}`,
          externalId: `ha-${i}`,
          maxSendPerMinute: 6000,
        })
      ).body,
    );
  }
  const campaigns = [];
  for (const a of accounts) {
    const res = await api(stack, 'POST', '/v1/campaigns', tenant.token, {
      accountId: a.id,
      name: `every 2 s on ${a.name}`,
      timezone: 'UTC',
      schedule: { type: 'interval', everySeconds: 2 },
      messages: [{ type: 'text', text: 'hi' }],
      targets: ['x', 'y'],
    });
    expect(res.status).toBe(201);
    campaigns.push(res.body.id as string);
  }
  const leaderLine = await stack.scheduler.waitForLog((l) => l['msg'] === 'leading the schedule');
  standby = startService('scheduler-2', 'services/scheduler/dist/main.js', {
    DATABASE_URL: stack.db.url,
    REDIS_URL,
    KEY_PREFIX: stack.keyPrefix,
    METRICS_PORT: '0',
    SCHEDULER_TICK_MS: String(TICK_MS),
  });
  await standby.waitForLog((l) => l['msg'] === 'scheduler ready');
  await eventually('a few runs', async () => (await countRuns()) >= 10, 30_000, 200);

  // Catch the leader mid-tick: hold the fencing row, so its tick transaction blocks on it.
  const blocker = new pg.Client({ connectionString: stack.db.url });
  let killedAt = 0;
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('select fence from scheduler_leader where id = 1 for update');
    await eventually(
      'the leader to wait inside its tick',
      async () => {
        const r = await blocker.query(
          `select count(*)::int as n from pg_stat_activity where application_name = 'metronome-scheduler' and wait_event_type = 'Lock'`,
        );
        return r.rows[0].n >= 1;
      },
      10_000,
      50,
    );
    killedAt = Date.now();
    stack.scheduler.child.kill('SIGKILL');
    await new Promise((r) => stack.scheduler.child.once('exit', r));
    await blocker.query('commit');
  } finally {
    await blocker.end();
  }
  const took = await standby.waitForLog((l) => l['msg'] === 'leading the schedule' && l['holder'] !== leaderLine['holder'], 20_000);
  const t = took['time'];
  const handOverMs = (typeof t === 'number' ? t : Date.parse(String(t))) - killedAt;
  // The lease (one tick, at least 1 s) must run out, then the standby's next tick takes it
  // (plus a second of slack for process start-up and logging on a busy machine).
  expect(handOverMs).toBeLessThanOrEqual(Math.max(1000, TICK_MS) + TICK_MS + 1000);

  // The new leader keeps every campaign on its grid: no occurrence twice, none skipped.
  const before = await countRuns();
  await eventually('runs under the new leader', async () => (await countRuns()) >= before + 10, 30_000, 200);
  const db = stack.db.db;
  for (const id of campaigns) {
    const runs = await db.selectFrom('runs').select(['scheduled_at']).where('campaign_id', '=', id).orderBy('scheduled_at').execute();
    const times = runs.map((r) => r.scheduled_at.getTime());
    expect(new Set(times).size).toBe(times.length);
    for (let i = 1; i < times.length; i++) {
      const gap = times[i]! - times[i - 1]!;
      expect(gap).toBeGreaterThanOrEqual(2000);
      // a run waits for the previous one to end, but never loses an occurrence's slot entirely:
      // at most the occurrences that came due meanwhile are coalesced into one
      expect(gap % 2000).toBe(0);
    }
  }
}, 90_000);

async function countRuns(): Promise<number> {
  const row = await stack.db.db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
