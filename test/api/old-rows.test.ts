import { sql } from 'kysely';
import { apiForFile, call, createCampaign, fields, tenantForFile } from './harness.js';

// Campaign rows saved before the API range-checked times (written here with SQL) are still
// shown by GET and the list, with the out-of-range instant as null (nextRunAt) or as stored
// (schedule), and lastError saying so; a PATCH of the schedule repairs them.

const api = apiForFile('api_old_rows');
const tenant = tenantForFile(api, 'old');

async function oldCampaign(set: { nextRunAt?: string; scheduleAt?: string; startAt?: string }): Promise<string> {
  const { id } = await createCampaign(api, tenant, set.startAt ? {} : { schedule: { type: 'once', at: '2030-02-01T00:00:00Z' } });
  if (set.nextRunAt) await sql`update campaigns set next_run_at = ${sql.raw(`'${set.nextRunAt}'::timestamptz`)} where id = ${id}`.execute(api.db);
  if (set.scheduleAt)
    await sql`update campaigns set schedule = jsonb_build_object('type', 'once', 'at', ${set.scheduleAt}::text) where id = ${id}`.execute(api.db);
  if (set.startAt)
    await sql`update campaigns set schedule = jsonb_build_object('type', 'interval', 'everySeconds', 300, 'startAt', ${set.startAt}::text) where id = ${id}`.execute(
      api.db,
    );
  return id;
}

test.each([
  ['next_run_at in year 0000', { nextRunAt: '0001-01-01 00:00:00+00 BC' }],
  ['next_run_at after 9999', { nextRunAt: '10000-01-01 00:00:00+00' }],
  ['next_run_at infinity', { nextRunAt: 'infinity' }],
  ['next_run_at -infinity', { nextRunAt: '-infinity' }],
])('%s: GET and the list answer 200 with nextRunAt null and lastError naming it; any PATCH recomputes it', async (_, set) => {
  const id = await oldCampaign(set);
  const one = await call(api, 'GET', `/v1/campaigns/${id}`, tenant.token);
  expect(one.status).toBe(200);
  expect(one.body.nextRunAt).toBeNull();
  expect(one.body.lastError).toMatch(/nextRunAt/);
  const list = await call(api, 'GET', '/v1/campaigns?limit=500', tenant.token);
  expect(list.status).toBe(200);
  expect(list.body.items.find((c: { id: string }) => c.id === id)).toEqual(one.body);

  const patched = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { name: 'repaired' });
  expect(patched.status).toBe(200);
  expect(patched.body.nextRunAt).toBe('2030-02-01T00:00:00.000Z');
  expect(patched.body.lastError).toBeNull();
});

test.each<[string, { nextRunAt?: string; scheduleAt?: string; startAt?: string }, string]>([
  ['schedule.at in year -1', { scheduleAt: '-000001-01-01T00:00:00.000Z', nextRunAt: '0002-01-01 00:00:00+00 BC' }, 'schedule.at'],
  ['schedule.at after 9999', { scheduleAt: '+010000-01-01T00:00:00.000Z', nextRunAt: '10000-01-01 00:00:00+00' }, 'schedule.at'],
  ['schedule.startAt after 9999', { startAt: '+010000-01-01T00:00:00.000Z' }, 'schedule.startAt'],
])('%s: shown as stored, lastError names it, a PATCH of other fields names it, a new schedule repairs it', async (_, set, field) => {
  const id = await oldCampaign(set);
  const stored = set.scheduleAt ?? set.startAt ?? '';
  const one = await call(api, 'GET', `/v1/campaigns/${id}`, tenant.token);
  expect(one.status).toBe(200);
  expect(JSON.stringify(one.body.schedule)).toContain(stored);
  expect(one.body.lastError).toContain(field);
  const list = await call(api, 'GET', '/v1/campaigns?limit=500', tenant.token);
  expect(list.status).toBe(200);
  expect(list.body.items.find((c: { id: string }) => c.id === id)).toEqual(one.body);

  const other = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { name: 'still bad' });
  expect(other.status).toBe(400);
  expect(fields(other)).toEqual([field]);
  const repaired = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { schedule: { type: 'once', at: '2030-03-01T00:00:00Z' } });
  expect(repaired.status).toBe(200);
  expect(repaired.body.schedule).toEqual({ type: 'once', at: '2030-03-01T00:00:00.000Z' });
  expect(repaired.body.nextRunAt).toBe('2030-03-01T00:00:00.000Z');
  expect(repaired.body.lastError).toBeNull();
});

test('the scheduler’s own lastError is kept when it has one', async () => {
  const id = await oldCampaign({ nextRunAt: 'infinity' });
  await api.db.updateTable('campaigns').set({ last_error: 'the scheduler could not plan it', active: false }).where('id', '=', id).execute();
  const one = await call(api, 'GET', `/v1/campaigns/${id}`, tenant.token);
  expect(one.status).toBe(200);
  expect(one.body.lastError).toBe('the scheduler could not plan it');
});
