import { call, campaignBody, createAccount, createCampaign, createTenant, fields, startApi, type Api, type Tenant } from './harness.js';

// Cron schedules: exactly five fields, and no two occurrences closer than MIN_INTERVAL_SECONDS
// (here 300 s), on create and on PATCH; nothing is saved when refused.

let api: Api;
let tenant: Tenant;
let accountId: string;
beforeAll(async () => {
  api = await startApi('api_cron', { minIntervalSeconds: 300 });
  tenant = await createTenant(api, 'cron');
  accountId = await createAccount(api, tenant);
}, 30_000);
afterAll(async () => api.close());

const cron = (expression: string, extra: Record<string, unknown> = {}) => campaignBody(accountId, { schedule: { type: 'cron', expression }, ...extra });
const campaignCount = async () =>
  Number(
    (
      await api.db
        .selectFrom('campaigns')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

test.each([
  ['six fields (seconds)', '* * * * * *'],
  ['six fields, once a day', '0 0 9 * * *'],
  ['seven fields (seconds and years)', '0 0 9 * * * 2031'],
  ['four fields', '0 9 * *'],
  ['every minute', '*/1 * * * *'],
  ['two minutes a minute apart', '0,1 * * * *'],
  ['four minutes apart across the hour', '3,59 * * * *'],
  ['23:59 then 00:00', '0,59 0,23 * * *'],
])('%s is a 400 naming schedule.expression, nothing saved', async (_, expression) => {
  const before = await campaignCount();
  const res = await call(api, 'POST', '/v1/campaigns', tenant.token, cron(expression));
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  expect(fields(res)).toEqual(['schedule.expression']);
  expect(await campaignCount()).toBe(before);
});

// Names every plain object inherits (and their case variants) were once looked up as nicknames
// and answered 500.
test.each([...Object.getOwnPropertyNames(Object.prototype), '__PROTO__', '@constructor', ' constructor '])(
  '%s is a 400 naming schedule.expression, on create and on PATCH',
  async (expression) => {
    const before = await campaignCount();
    const created = await call(api, 'POST', '/v1/campaigns', tenant.token, cron(expression));
    expect(created.status).toBe(400);
    expect(fields(created)).toEqual(['schedule.expression']);
    expect(await campaignCount()).toBe(before);
    const { id } = await createCampaign(api, tenant);
    const patched = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { schedule: { type: 'cron', expression } });
    expect(patched.status).toBe(400);
    expect(fields(patched)).toEqual(['schedule.expression']);
  },
);

test.each([['*/5 * * * *'], ['0,30 * * * *'], ['0 9 * * 1-5'], ['@hourly']])('%s is accepted', async (expression) => {
  const res = await call(api, 'POST', '/v1/campaigns', tenant.token, cron(expression));
  expect(res.status).toBe(201);
  expect(res.body.schedule).toEqual({ type: 'cron', expression });
});

test('a daylight-saving change is measured in the campaign zone: 01:58 and 03:02 are 4 minutes apart in New York the day 02:00 is skipped', async () => {
  const ny = await call(
    api,
    'POST',
    '/v1/campaigns',
    tenant.token,
    cron('2,58 1,3 * * *', { timezone: 'America/New_York', deliveryWindow: { start: '00:00', end: '24:00' } }),
  );
  expect(ny.status).toBe(400);
  expect(fields(ny)).toEqual(['schedule.expression']);
  const kl = await call(api, 'POST', '/v1/campaigns', tenant.token, cron('2,58 1,3 * * *', { deliveryWindow: { start: '00:00', end: '24:00' } }));
  expect(kl.status).toBe(201);
});

test('PATCH applies the same rules to the schedule, and to the zone a cron is read in', async () => {
  const { id } = await createCampaign(api, tenant, {
    schedule: { type: 'cron', expression: '2,58 1,3 * * *' },
    deliveryWindow: { start: '00:00', end: '24:00' },
  });
  const seconds = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { schedule: { type: 'cron', expression: '* * * * * *' } });
  expect(seconds.status).toBe(400);
  expect(fields(seconds)).toEqual(['schedule.expression']);
  const zone = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { timezone: 'America/New_York' });
  expect(zone.status).toBe(400);
  expect(fields(zone)).toEqual(['schedule.expression']);
  const stored = await api.db.selectFrom('campaigns').select(['schedule', 'timezone']).where('id', '=', id).executeTakeFirstOrThrow();
  expect(stored).toEqual({ schedule: { type: 'cron', expression: '2,58 1,3 * * *' }, timezone: 'Asia/Kuala_Lumpur' });
  const fine = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { schedule: { type: 'cron', expression: '*/10 * * * *' } });
  expect(fine.status).toBe(200);
});
