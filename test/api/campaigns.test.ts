import { randomBytes } from 'node:crypto';
import { ADMIN_TOKEN, apiForFile, call, campaignBody, createAccount, createCampaign, createTenant, fields, seedRun, tenantForFile } from './harness.js';

// Campaigns: validation, next_run_at, PATCH, DELETE, and the manual run.

const api = apiForFile('api_campaigns');
const a = tenantForFile(api, 'A');
const b = tenantForFile(api, 'B');
let accountA: string;
beforeAll(async () => {
  accountA = await createAccount(api, a);
});

async function uploadMedia(token: string): Promise<string> {
  const res = await api.app.inject({
    method: 'POST',
    url: '/v1/media',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' },
    payload: randomBytes(64),
  });
  return JSON.parse(res.body).id;
}

describe('create', () => {
  test('201 with the contract shape; an interval without startAt is due now', async () => {
    const media = await uploadMedia(a.token);
    const body = campaignBody(accountA, {
      messages: [
        { type: 'text', text: 'Hello' },
        { type: 'media', mediaId: media, caption: 'look' },
      ],
    });
    const res = await call(api, 'POST', '/v1/campaigns', a.token, body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      ...body,
      id: expect.any(String),
      tenantId: a.id,
      audienceIds: [],
      active: true,
      autoResume: false,
      scheduleText: 'every 5 minutes, 06:00–18:00 Asia/Kuala_Lumpur',
      nextRunAt: new Date(api.clock.now()).toISOString(),
      lastRunId: null,
      pausedReason: null,
      lastError: null,
      catchUp: { policy: 'latest', maxLatenessSeconds: null },
      skippedCount: 0,
      lastSkippedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await call(api, 'GET', `/v1/campaigns/${res.body.id}`, a.token)).body).toEqual(res.body);
  });

  test('a cron schedule is due at its next match in the campaign timezone; inactive has no next run', async () => {
    // 09:00 on weekdays in Kuala Lumpur (UTC+8); NOW is Wednesday 11:00 there, so Thursday 09:00.
    const cron = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(accountA, { schedule: { type: 'cron', expression: '0 9 * * 1-5' } }));
    expect(cron.body.nextRunAt).toBe('2030-01-17T01:00:00.000Z');
    const inactive = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(accountA, { active: false }));
    expect(inactive.body.nextRunAt).toBeNull();
    const once = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(accountA, { schedule: { type: 'once', at: '2030-02-01T10:00:00+08:00' } }));
    expect(once.body.schedule).toEqual({ type: 'once', at: '2030-02-01T02:00:00.000Z' });
    expect(once.body.nextRunAt).toBe('2030-02-01T02:00:00.000Z');
  });

  test('the window defaults to always open', async () => {
    const body = campaignBody(accountA);
    delete body['deliveryWindow'];
    const res = await call(api, 'POST', '/v1/campaigns', a.token, body);
    expect(res.body.deliveryWindow).toEqual({ start: '00:00', end: '24:00' });
  });

  test.each([
    ['an unknown timezone', { timezone: 'Mars/Olympus_Mons' }, ['timezone']],
    ['an empty target list', { targets: [] }, ['targets']],
    ['a window with start == end', { deliveryWindow: { start: '06:00', end: '06:00' } }, ['deliveryWindow']],
    ['a window starting at 24:00', { deliveryWindow: { start: '24:00', end: '06:00' } }, ['deliveryWindow.start']],
    ['a malformed window time', { deliveryWindow: { start: '6am', end: '18:00' } }, ['deliveryWindow.start']],
    ['repeated targets', { targets: ['x', 'y', 'x'] }, ['targets']],
    ['an empty target', { targets: [''] }, ['targets.0']],
    ['too many targets', { targets: Array.from({ length: 10_001 }, (_, i) => `c${i}`) }, ['targets']],
    ['an interval below MIN_INTERVAL_SECONDS', { schedule: { type: 'interval', everySeconds: 59 } }, ['schedule.everySeconds']],
    ['a cron that is not one', { schedule: { type: 'cron', expression: 'every day' } }, ['schedule.expression']],
    ['an unknown schedule type', { schedule: { type: 'sometimes' } }, ['schedule.type']],
    ['no messages', { messages: [] }, ['messages']],
    ['eleven parts', { messages: Array.from({ length: 11 }, () => ({ type: 'text', text: 'x' })) }, ['messages']],
    ['a text over 4096 characters', { messages: [{ type: 'text', text: 'x'.repeat(4097) }] }, ['messages.0.text']],
    [
      'a caption over 1024 characters',
      { messages: [{ type: 'media', mediaId: '00000000-0000-4000-8000-000000000000', caption: 'x'.repeat(1025) }] },
      ['messages.0.caption'],
    ],
    ['an unknown field', { colour: 'blue' }, ['colour']],
    ['a NUL character', { name: 'a\u0000b' }, ['name']],
  ])('%s → 400 naming the field', async (_, extra, expected) => {
    const res = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(accountA, extra));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(fields(res)).toEqual(expected);
  });

  test('several problems are reported together', async () => {
    const res = await call(
      api,
      'POST',
      '/v1/campaigns',
      a.token,
      campaignBody(accountA, { timezone: 'Nowhere/Land', deliveryWindow: { start: '09:00', end: '09:00' }, targets: ['a', 'a'] }),
    );
    expect(fields(res).sort()).toEqual(['deliveryWindow', 'targets', 'timezone']);
  });

  test("another tenant's account or media is rejected like a missing one", async () => {
    const accountB = await createAccount(api, b);
    const mediaB = await uploadMedia(b.token);
    const res = await call(
      api,
      'POST',
      '/v1/campaigns',
      a.token,
      campaignBody(accountB, {
        messages: [
          { type: 'text', text: 'hi' },
          { type: 'media', mediaId: mediaB },
        ],
      }),
    );
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['accountId', 'messages.1.mediaId']);
  });

  test('a body that is not JSON is 400; one not sent as JSON is 415', async () => {
    const broken = await api.app.inject({
      method: 'POST',
      url: '/v1/campaigns',
      headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(broken.statusCode).toBe(400);
    expect(JSON.parse(broken.body).error.details[0].field).toBe('body');
    const text = await api.app.inject({
      method: 'POST',
      url: '/v1/campaigns',
      headers: { authorization: `Bearer ${a.token}`, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    expect(JSON.parse(text.body).error.details[0].field).toBe('content-type');
    const none = await call(api, 'POST', '/v1/campaigns', a.token);
    expect(none.status).toBe(400);
  });

  test('the admin creates for a named tenant, against that tenant’s account', async () => {
    const res = await call(api, 'POST', '/v1/campaigns', ADMIN_TOKEN, { ...campaignBody(accountA), tenantId: a.id });
    expect(res.status).toBe(201);
    expect(res.body.tenantId).toBe(a.id);
    const wrong = await call(api, 'POST', '/v1/campaigns', ADMIN_TOKEN, { ...campaignBody(accountA), tenantId: b.id });
    expect(fields(wrong)).toEqual(['accountId']);
    const nobody = await call(api, 'POST', '/v1/campaigns', ADMIN_TOKEN, { ...campaignBody(accountA), tenantId: '00000000-0000-4000-8000-000000000000' });
    expect(fields(nobody)).toEqual(['tenantId']);
    const byTenant = await call(api, 'POST', '/v1/campaigns', a.token, { ...campaignBody(accountA), tenantId: a.id });
    expect(fields(byTenant)).toEqual(['tenantId']);
  });
});

describe('scheduleText', () => {
  test('every campaign answer puts its schedule in words (libs/core scheduleInWords); a PATCH rewords it', async () => {
    const { id } = await createCampaign(api, a, {
      schedule: { type: 'cron', expression: '30 9 * * 1,3' },
      timezone: 'Europe/Berlin',
      deliveryWindow: undefined,
    });
    const words = 'at 09:30 on Mon, Wed (cron 30 9 * * 1,3), Europe/Berlin';
    expect((await call(api, 'GET', `/v1/campaigns/${id}`, a.token)).body.scheduleText).toBe(words);
    const listed = (await call(api, 'GET', '/v1/campaigns?limit=500', a.token)).body.items.find((c: { id: string }) => c.id === id);
    expect(listed.scheduleText).toBe(words);
    const patched = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, {
      schedule: { type: 'interval', everySeconds: 3600 },
      deliveryWindow: { start: '22:00', end: '06:00' },
    });
    expect(patched.body.scheduleText).toBe('every hour, 22:00–06:00 (overnight) Europe/Berlin');
    const doc = JSON.parse((await api.app.inject({ method: 'GET', url: '/openapi.json' })).body);
    expect(doc.components.schemas.Campaign.required).toContain('scheduleText');
  });
});

describe('read, PATCH, DELETE', () => {
  test('list is newest first with a cursor', async () => {
    const t = await createTenant(api, 'lister');
    const ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await createCampaign(api, t)).id);
      api.clock.advance(1); // created_at comes from the API's clock
    }
    const first = await call(api, 'GET', '/v1/campaigns?limit=2', t.token);
    expect(first.body.items.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    const second = await call(api, 'GET', `/v1/campaigns?limit=2&cursor=${first.body.nextCursor}`, t.token);
    expect(second.body.items.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    expect(second.body.nextCursor).toBeNull();
  });

  test('PATCH of the schedule recomputes nextRunAt; other fields and repeated values do not', async () => {
    const { id } = await createCampaign(api, a);
    const created = (await call(api, 'GET', `/v1/campaigns/${id}`, a.token)).body.nextRunAt;
    expect(created).toBe(new Date(api.clock.now()).toISOString());
    // Were nextRunAt recomputed now, an interval without startAt would move to the new now.
    api.clock.advance(60_000);
    const renamed = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { name: 'Evening', active: true, timezone: 'Asia/Kuala_Lumpur' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Evening', nextRunAt: created });
    const rescheduled = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { schedule: { type: 'cron', expression: '30 7 * * *' } });
    expect(rescheduled.body.nextRunAt).toBe('2030-01-16T23:30:00.000Z');
    const off = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { active: false });
    expect(off.body).toMatchObject({ active: false, nextRunAt: null });
    const on = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { active: true, schedule: { type: 'interval', everySeconds: 600 } });
    expect(on.body.nextRunAt).toBe(new Date(api.clock.now()).toISOString());
  });

  test('PATCH validates the merged campaign', async () => {
    const { id } = await createCampaign(api, a, { schedule: { type: 'cron', expression: '0 9 * * *' } });
    const res = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { timezone: 'Atlantis/Capital' });
    expect(fields(res)).toEqual(['timezone']);
    const window = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { deliveryWindow: { start: '10:00', end: '10:00' } });
    expect(fields(window)).toEqual(['deliveryWindow']);
    const unknown = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { tenantId: b.id });
    expect(fields(unknown)).toEqual(['tenantId']);
    const row = await api.db.selectFrom('campaigns').select(['timezone', 'window_start']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ timezone: 'Asia/Kuala_Lumpur', window_start: '06:00' });
  });

  test('DELETE deactivates, cancels open runs (pending → skipped) and then answers 404', async () => {
    const { id } = await createCampaign(api, a);
    const paused = await seedRun(api, id, 'paused', { x: 'sent', y: 'pending' });
    const done = await seedRun(api, id, 'success', { x: 'sent' });
    const res = await api.app.inject({ method: 'DELETE', url: `/v1/campaigns/${id}`, headers: { authorization: `Bearer ${a.token}` } });
    expect(res.statusCode).toBe(204);
    const row = await api.db.selectFrom('campaigns').select(['active', 'deleted_at', 'next_run_at']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.active).toBe(false);
    expect(row.deleted_at).not.toBeNull();
    expect(row.next_run_at).toBeNull();
    const runs = await api.db.selectFrom('runs').select(['id', 'status']).where('campaign_id', '=', id).orderBy('status').execute();
    expect(runs).toEqual(
      expect.arrayContaining([
        { id: paused.id, status: 'cancelled' },
        { id: done.id, status: 'success' },
      ]),
    );
    const targets = await api.db
      .selectFrom('run_targets')
      .select(['chat_id', 'status', 'error_code'])
      .where('run_id', '=', paused.id)
      .orderBy('chat_id')
      .execute();
    expect(targets).toEqual([
      { chat_id: 'x', status: 'sent', error_code: null },
      { chat_id: 'y', status: 'skipped', error_code: 'cancelled' },
    ]);
    expect((await call(api, 'GET', `/v1/campaigns/${id}`, a.token)).status).toBe(404);
    expect((await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { name: 'back' })).status).toBe(404);
    expect((await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token)).status).toBe(404);
    expect((await api.app.inject({ method: 'DELETE', url: `/v1/campaigns/${id}`, headers: { authorization: `Bearer ${a.token}` } })).statusCode).toBe(404);
    expect((await call(api, 'GET', '/v1/campaigns?limit=500', a.token)).body.items.map((c: { id: string }) => c.id)).not.toContain(id);
  });

  test("another tenant's campaign answers 404 on every route", async () => {
    const { id } = await createCampaign(api, a);
    const missing = await call(api, 'GET', '/v1/campaigns/00000000-0000-4000-8000-000000000000', b.token);
    const foreign = await call(api, 'GET', `/v1/campaigns/${id}`, b.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await call(api, 'PATCH', `/v1/campaigns/${id}`, b.token, { name: 'mine now' })).status).toBe(404);
    expect((await call(api, 'POST', `/v1/campaigns/${id}/runs`, b.token)).status).toBe(404);
    expect((await api.app.inject({ method: 'DELETE', url: `/v1/campaigns/${id}`, headers: { authorization: `Bearer ${b.token}` } })).statusCode).toBe(404);
    expect((await call(api, 'GET', `/v1/campaigns/${id}`, a.token)).body.active).toBe(true);
  });
});

describe('lastError (why the scheduler deactivated a campaign)', () => {
  const reason = 'schedule.at cannot be turned into a run: out of range';
  const stored = async (id: string) => (await api.db.selectFrom('campaigns').select('last_error').where('id', '=', id).executeTakeFirstOrThrow()).last_error;
  // what the scheduler does to a campaign it cannot turn into a run
  const deactivate = (id: string) =>
    api.db.updateTable('campaigns').set({ active: false, last_error: reason, next_run_at: null }).where('id', '=', id).execute();

  test('null on create; shown by GET, the list and the PATCH answer once set; any PATCH clears it', async () => {
    const t = await createTenant(api, 'last-error');
    const { id } = await createCampaign(api, t);
    expect((await call(api, 'GET', `/v1/campaigns/${id}`, t.token)).body.lastError).toBeNull();
    await deactivate(id);
    expect((await call(api, 'GET', `/v1/campaigns/${id}`, t.token)).body).toMatchObject({ active: false, lastError: reason });
    expect((await call(api, 'GET', '/v1/campaigns', t.token)).body.items).toEqual([expect.objectContaining({ id, lastError: reason })]);
    const renamed = await call(api, 'PATCH', `/v1/campaigns/${id}`, t.token, { name: 'fixed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ active: false, lastError: null });
    expect(await stored(id)).toBeNull();
  });

  test('re-activating clears it', async () => {
    const { id } = await createCampaign(api, a);
    await deactivate(id);
    const on = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { active: true });
    expect(on.body).toMatchObject({ active: true, lastError: null, nextRunAt: new Date(api.clock.now()).toISOString() });
    expect(await stored(id)).toBeNull();
  });

  test('a rejected PATCH leaves it in place', async () => {
    const { id } = await createCampaign(api, a);
    await deactivate(id);
    expect((await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { timezone: 'Nowhere/Land' })).status).toBe(400);
    expect(await stored(id)).toBe(reason);
  });

  test('the OpenAPI document describes it', async () => {
    const doc = (await call(api, 'GET', '/openapi.json', null)).body;
    expect(doc.components.schemas.Campaign.properties.lastError).toBeDefined();
    expect(doc.components.schemas.Campaign.required).toContain('lastError');
  });
});
