import { call, createAccount, createCampaign, createTenant, NOW, seedRun, startApi, type Api } from './harness.js';

// /metrics beyond the run and queue gauges: request durations by route pattern, and the runs
// that are due but have not started (with the age of the oldest), computed at scrape time.

let api: Api;
beforeAll(async () => {
  api = await startApi('api_metrics');
}, 30_000);
afterAll(async () => api.close());

async function scrape(): Promise<string> {
  const res = await api.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** The value of the first series of `name` carrying every label of `labels` (in any order). */
function value(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name} `) || l.startsWith(`${name}{`)) && wanted.every((w) => l.slice(name.length, l.lastIndexOf(' ')).includes(w)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('due-but-not-started runs: queued, scheduledAt passed, nothing sent; with the age of the oldest', async () => {
  const before = await scrape();
  expect(value(before, 'metronome_runs_due_not_started')).toBe(0);
  expect(value(before, 'metronome_runs_due_not_started_oldest_age_seconds')).toBe(0);

  const tenant = await createTenant(api, 'metrics');
  // Each campaign may have one queued run at a time (runs_one_open_per_campaign).
  const late = await createCampaign(api, tenant);
  const alsoLate = await createCampaign(api, tenant);
  const future = await createCampaign(api, tenant);
  const sending = await createCampaign(api, tenant);
  await seedRun(api, late.id, 'queued', { a: 'pending' }, { scheduledAt: new Date(NOW - 90_000) });
  await seedRun(api, alsoLate.id, 'queued', { a: 'pending' }, { scheduledAt: new Date(NOW - 5_000) });
  await seedRun(api, future.id, 'queued', { a: 'pending' }, { scheduledAt: new Date(NOW + 60_000) });
  const started = await seedRun(api, sending.id, 'queued', { a: 'pending' }, { scheduledAt: new Date(NOW - 600_000) });
  // a run put back in the queue after it sent (a resumed one) is not "not started"
  await api.db
    .updateTable('runs')
    .set({ first_send_at: new Date(NOW - 500_000) })
    .where('id', '=', started.id)
    .execute();
  // and a paused run is waiting for a person, not for the system
  await seedRun(api, late.id, 'paused', { a: 'pending' }, { scheduledAt: new Date(NOW - 900_000) });

  const after = await scrape();
  expect(value(after, 'metronome_runs_due_not_started')).toBe(2);
  expect(value(after, 'metronome_runs_due_not_started_oldest_age_seconds')).toBe(90);

  // the clock moves: the same run is older
  api.clock.advance(30_000);
  expect(value(await scrape(), 'metronome_runs_due_not_started_oldest_age_seconds')).toBe(120);
});

test('request durations are labelled by method, route pattern and status, never by raw URL', async () => {
  const tenant = await createTenant(api, 'durations');
  const { id } = await createCampaign(api, tenant);
  const run = await seedRun(api, id, 'success', { a: 'sent' });
  expect((await call(api, 'GET', `/v1/runs/${run.id}`, tenant.token)).status).toBe(200);
  expect((await call(api, 'GET', `/v1/runs/${run.id}`, tenant.token)).status).toBe(200);
  expect((await call(api, 'POST', `/v1/runs/${run.id}/resume`, tenant.token)).status).toBe(409);
  expect((await call(api, 'GET', `/v1/nothing/${run.id}`, tenant.token)).status).toBe(404);

  const text = await scrape();
  expect(value(text, 'metronome_http_request_duration_seconds_count', { method: 'GET', route: '/v1/runs/:id', status: '200' })).toBeGreaterThanOrEqual(2);
  expect(value(text, 'metronome_http_request_duration_seconds_count', { method: 'POST', route: '/v1/runs/:id/resume', status: '409' })).toBe(1);
  expect(value(text, 'metronome_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBe(1);
  expect(text).not.toContain(run.id);
});

test('accounts by platform and status, the flood-blocked ones, and whether PostgreSQL and Redis answer', async () => {
  const tenant = await createTenant(api, 'account-gauges');
  const [a, b, c] = [await createAccount(api, tenant), await createAccount(api, tenant), await createAccount(api, tenant)];
  const before = await scrape();
  const active = value(before, 'metronome_accounts', { platform: 'http', status: 'active' }) ?? 0;
  expect(value(before, 'metronome_accounts', { platform: 'telegram', status: 'disconnected' })).toBe(0); // zeros are series too
  await api.db.updateTable('accounts').set({ status: 'disconnected' }).where('id', '=', a).execute();
  await api.db
    .updateTable('accounts')
    .set({ blocked_until: new Date(NOW + 60_000) })
    .where('id', '=', b)
    .execute();
  await api.db
    .updateTable('accounts')
    .set({ blocked_until: new Date(NOW - 60_000) })
    .where('id', '=', c)
    .execute(); // over

  const after = await scrape();
  expect(value(after, 'metronome_accounts', { platform: 'http', status: 'active' })).toBe(active - 1);
  expect(value(after, 'metronome_accounts', { platform: 'http', status: 'disconnected' })).toBe(1);
  expect(value(after, 'metronome_accounts_blocked', { platform: 'http' })).toBe(1);
  expect(value(after, 'metronome_dependency_up', { dependency: 'postgres' })).toBe(1);
  expect(value(after, 'metronome_dependency_up', { dependency: 'redis' })).toBe(1);

  // Redis gone from this API: the scrape still answers, and says so
  api.redis.disconnect();
  try {
    const away = await scrape();
    expect(value(away, 'metronome_dependency_up', { dependency: 'redis' })).toBe(0);
    expect(value(away, 'metronome_dependency_up', { dependency: 'postgres' })).toBe(1);
  } finally {
    await api.redis.connect();
  }
  expect(value(await scrape(), 'metronome_dependency_up', { dependency: 'redis' })).toBe(1);
}, 30_000);
