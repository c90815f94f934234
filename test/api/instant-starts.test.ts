import { occurrenceJitterMs } from '@metronome/core';
import { ScheduleRepository } from '@metronome/db';
import { createLogger, Metrics } from '@metronome/observability';
import { runJobId } from '@metronome/queue';
import { redisKeys } from '@metronome/redis';
import { runTick } from '../../services/scheduler/src/tick.js';
import { apiForFile, call, campaignBody, createAccount, NOW, startApi, type Api, type Tenant, createTenant } from './harness.js';

// Instant starts with INSTANT_STARTS=create (the default): a campaign saved due gets its run in
// the transaction that saved it, planned as the scheduler's tick plans it, and its job at once;
// the tick then finds nothing left to do for that occurrence. What the API leaves to the tick
// (a campaign outside its window, an account that cannot send) still nudges the leader. Real
// PostgreSQL and Redis; the tick is the scheduler's own, on the same database.

const api = apiForFile('api_instant_starts', { instantStarts: 'create' });
let a: Tenant;
let account: string;
beforeAll(async () => {
  a = await createTenant(api, 'A');
  account = await createAccount(api, a);
});
beforeEach(() => api.clock.set(NOW));

interface ShownRun {
  id: string;
  trigger: string;
  status: string;
  scheduledAt: string;
}
const runsOf = async (on: Api, token: string, campaignId: string): Promise<ShownRun[]> =>
  (await call(on, 'GET', `/v1/runs?campaignId=${campaignId}`, token)).body.items;
const wakes = (on: Api) => on.redis.llen(redisKeys(on.prefix).schedulerWake);
/** One tick of the scheduler, as its leader, on the API's database and queue. */
async function tick(on: Api): Promise<number> {
  const repo = new ScheduleRepository(on.db);
  const fence = await repo.takeFence('instant-test', new Date(on.clock.now()));
  const deps = {
    repo,
    queue: on.queue,
    clock: on.clock,
    logger: createLogger('test', 'silent'),
    metrics: new Metrics('test'),
    batch: 500,
    jitterMs: 0,
    lookaheadMs: 0,
  };
  return (await runTick(deps, fence)).created;
}

test('a campaign created due has its run and its job when the answer comes; the campaign moved on; the tick adds nothing', async () => {
  const before = await wakes(api);
  const created = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(account, { name: 'created due' }));
  expect(created.status).toBe(201);
  expect(created.body.nextRunAt).toBe(new Date(NOW).toISOString());
  const runs = await runsOf(api, a.token, created.body.id);
  expect(runs.map((r) => ({ trigger: r.trigger, status: r.status, scheduledAt: r.scheduledAt }))).toEqual([
    { trigger: 'schedule', status: 'queued', scheduledAt: created.body.nextRunAt },
  ]);
  const job = await api.queue.queue.getJob(runJobId(runs[0]!.id, 0));
  expect(job?.data).toEqual({ runId: runs[0]!.id });
  expect(job?.opts.delay ?? 0).toBe(0);
  // moved to its next occurrence (every 300 s), as the tick would have moved it
  expect((await call(api, 'GET', `/v1/campaigns/${created.body.id}`, a.token)).body.nextRunAt).toBe(new Date(NOW + 300_000).toISOString());
  expect(await wakes(api)).toBe(before); // the leader was not needed
  expect(await tick(api)).toBe(0);
  expect(await runsOf(api, a.token, created.body.id)).toHaveLength(1);
});

test('activating a due campaign creates its run at once', async () => {
  const created = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(account, { name: 'activated', active: false }));
  expect(await runsOf(api, a.token, created.body.id)).toEqual([]);
  const on = await call(api, 'PATCH', `/v1/campaigns/${created.body.id}`, a.token, { active: true });
  expect(on.status).toBe(200);
  const runs = await runsOf(api, a.token, created.body.id);
  expect(runs.map((r) => [r.trigger, r.scheduledAt])).toEqual([['schedule', on.body.nextRunAt]]);
  expect(await api.queue.queue.getJob(runJobId(runs[0]!.id, 0))).toBeDefined();
  // a PATCH that changes nothing of its timing creates nothing more
  expect((await call(api, 'PATCH', `/v1/campaigns/${created.body.id}`, a.token, { name: 'renamed' })).status).toBe(200);
  expect(await runsOf(api, a.token, created.body.id)).toHaveLength(1);
});

test('what the API leaves to the tick: outside its window, or an account that cannot send, no run; the leader is nudged', async () => {
  // 11:00 in Kuala Lumpur: a 20:00–22:00 window is shut
  const before = await wakes(api);
  const shut = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(account, { name: 'shut', deliveryWindow: { start: '20:00', end: '22:00' } }));
  expect(shut.status).toBe(201);
  expect(await runsOf(api, a.token, shut.body.id)).toEqual([]);
  expect(await wakes(api)).toBe(Math.min(1, before + 1)); // a one-entry list

  const held = await createAccount(api, a);
  await api.db.updateTable('accounts').set({ status: 'disconnected' }).where('id', '=', held).execute();
  const idle = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(held, { name: 'held' }));
  expect(idle.status).toBe(201);
  expect(await runsOf(api, a.token, idle.body.id)).toEqual([]);
  // an active account blocked until later cannot send either; one whose block has ended can
  const blocked = await createAccount(api, a);
  await api.db
    .updateTable('accounts')
    .set({ blocked_until: new Date(NOW + 60_000) })
    .where('id', '=', blocked)
    .execute();
  const waits = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(blocked, { name: 'blocked' }));
  expect(waits.status).toBe(201);
  expect(await runsOf(api, a.token, waits.body.id)).toEqual([]);
  const unblocked = await createAccount(api, a);
  await api.db
    .updateTable('accounts')
    .set({ blocked_until: new Date(NOW) })
    .where('id', '=', unblocked)
    .execute();
  const goes = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(unblocked, { name: 'block ended' }));
  expect((await runsOf(api, a.token, goes.body.id)).map((r) => r.scheduledAt)).toEqual([goes.body.nextRunAt]);
  // the tick then decides both as before: the shut one moves to its window, the held one waits
  expect(await tick(api)).toBe(0);
  expect((await call(api, 'GET', `/v1/campaigns/${shut.body.id}`, a.token)).body.nextRunAt).toBe('2030-01-16T12:00:00.000Z');
});

test('never two runs for one occurrence: creates racing the tick give each campaign exactly one run, at its own nextRunAt', async () => {
  const answers: { status: number; body: { id: string; nextRunAt: string } }[] = [];
  let racing = true;
  const ticks = (async () => {
    let created = 0;
    while (racing) created += await tick(api);
    return created;
  })();
  await Promise.all(
    Array.from({ length: 20 }, async (_, i) =>
      answers.push(await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(account, { name: `race ${i}`, targets: [`race-${i}`] }))),
    ),
  );
  racing = false;
  expect(await ticks).toBe(0); // each occurrence was taken in the transaction that saved its campaign
  for (const c of answers) {
    expect(c.status).toBe(201);
    expect((await runsOf(api, a.token, c.body.id)).map((r) => r.scheduledAt)).toEqual([c.body.nextRunAt]);
  }
});

test('with SCHEDULER_JITTER_MS the run is planned as the tick plans it: delayed by the occurrence jitter, its job too', async () => {
  const jittered = await startApi('api_instant_jitter', { instantStarts: 'create', schedulerJitterMs: 60_000 });
  try {
    const t = await createTenant(jittered, 'J');
    const acc = await createAccount(jittered, t);
    const created = await call(jittered, 'POST', '/v1/campaigns', t.token, campaignBody(acc, { name: 'jittered' }));
    const due = Date.parse(created.body.nextRunAt);
    const jitter = occurrenceJitterMs(created.body.id, new Date(due), 60_000);
    const [run] = await runsOf(jittered, t.token, created.body.id);
    expect(Date.parse(run!.scheduledAt)).toBe(due + jitter);
    expect((await jittered.queue.queue.getJob(runJobId(run!.id, 0)))?.opts.delay).toBe(jitter);
  } finally {
    await jittered.close();
  }
});
