import { randomUUID } from 'node:crypto';
import { type Answer, apiForFile, call, campaignBody, createAccount, createCampaign, fields, NOW, seedRun, tenantForFile } from './harness.js';

// Values PostgreSQL or the scheduler cannot hold are refused at the door with a 400 naming the
// field, and nothing is saved: instants outside years 0001–9999 (in UTC), chat ids with control
// characters or over 256 characters, cursors naming impossible instants.

const api = apiForFile('api_storable');
const tenant = tenantForFile(api, 'storable');
let accountId: string;
beforeAll(async () => {
  accountId = await createAccount(api, tenant);
});

async function campaignCount(): Promise<number> {
  const row = await api.db
    .selectFrom('campaigns')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function expectRejected(res: Answer, field: string): void {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  expect(fields(res)).toEqual([field]);
}

// Each is valid ISO-8601 with an offset, or close to it; none is an instant in years 0001–9999 UTC.
const UNSTORABLE_TIMES: [string, string][] = [
  ['year 0000', '0000-06-01T00:00:00Z'],
  ['UTC year -1 through its offset', '0000-01-01T00:00:00+23:59'],
  ['0001-01-01 at +00:01, which is still year 0000 in UTC', '0001-01-01T00:00:00+00:01'],
  ['UTC year 10000 through its offset', '9999-12-31T23:59:59-01:00'],
  ['year 10000', '10000-01-01T00:00:00Z'],
];
const BOUNDARY_TIMES = ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '9999-12-31T23:59:59.999Z'];

const timeFields = [
  { field: 'schedule.at', schedule: (t: string) => ({ type: 'once', at: t }) },
  { field: 'schedule.startAt', schedule: (t: string) => ({ type: 'interval', everySeconds: 300, startAt: t }) },
];

describe('time fields hold only instants in years 0001–9999 (UTC)', () => {
  for (const { field, schedule } of timeFields) {
    test.each(UNSTORABLE_TIMES)(`POST: ${field} in %s → 400 naming it, nothing saved`, async (_, t) => {
      const before = await campaignCount();
      const res = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(accountId, { schedule: schedule(t) }));
      expectRejected(res, field);
      expect(await campaignCount()).toBe(before);
    });

    test.each(UNSTORABLE_TIMES)(`PATCH: ${field} in %s → 400 naming it, the campaign unchanged`, async (_, t) => {
      const { id } = await createCampaign(api, tenant);
      const stored = await api.db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const res = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { schedule: schedule(t) });
      expectRejected(res, field);
      expect(await api.db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow()).toEqual(stored);
    });

    test.each(BOUNDARY_TIMES)(`${field} at %s is accepted, shown, listed and can be changed again`, async (t) => {
      const created = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(accountId, { schedule: schedule(t) }));
      expect(created.status).toBe(201);
      const utc = new Date(t).toISOString();
      expect(created.body.schedule).toEqual(schedule(utc));
      const shown = await call(api, 'GET', `/v1/campaigns/${created.body.id}`, tenant.token);
      expect(shown.status).toBe(200);
      expect(shown.body).toEqual(created.body);
      expect((await call(api, 'GET', '/v1/campaigns?limit=500', tenant.token)).status).toBe(200);
      const other = BOUNDARY_TIMES.find((b) => b !== t) as string;
      const patched = await call(api, 'PATCH', `/v1/campaigns/${created.body.id}`, tenant.token, { schedule: schedule(other) });
      expect(patched.status).toBe(200);
      expect(patched.body.schedule).toEqual(schedule(new Date(other).toISOString()));
    });
  }

  test('a campaign stored before this check with an unstorable instant: other edits name it, a new schedule fixes it', async () => {
    const { id } = await createCampaign(api, tenant);
    await api.db
      .updateTable('campaigns')
      .set({ schedule: JSON.stringify({ type: 'once', at: '-000001-12-31T00:01:00.000Z' }) as never, active: false, next_run_at: null })
      .where('id', '=', id)
      .execute();
    expectRejected(await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { name: 'renamed' }), 'schedule.at');
    const fixed = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { schedule: { type: 'once', at: '2030-03-01T00:00:00Z' }, active: true });
    expect(fixed.status).toBe(200);
    expect(fixed.body).toMatchObject({ schedule: { type: 'once', at: '2030-03-01T00:00:00.000Z' }, nextRunAt: '2030-03-01T00:00:00.000Z' });
  });

  test('a once campaign at the last storable instant is due then', async () => {
    const res = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(accountId, { schedule: { type: 'once', at: '9999-12-31T23:59:59Z' } }));
    expect(res.body.nextRunAt).toBe('9999-12-31T23:59:59.000Z');
  });
});

describe('validate, write, answer', () => {
  test('an answer that cannot be given rolls its write back, on create and on PATCH', async () => {
    const { id } = await createCampaign(api, tenant);
    const stored = await api.db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const before = await campaignCount();
    // A clock past 9999 stamps createdAt and updatedAt in a year no answer can show.
    api.clock.set(Date.parse('9999-12-31T00:00:00Z') + 3 * 86_400_000);
    try {
      const created = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(accountId));
      expect(created.status).toBe(500);
      expect(await campaignCount()).toBe(before);
      const patched = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { name: 'renamed' });
      expect(patched.status).toBe(500);
      expect(await api.db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow()).toEqual(stored);
    } finally {
      api.clock.set(NOW);
    }
  });
});

/** A cursor as the API encodes them (base64url JSON); the inside is what a client could forge. */
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

describe('cursors naming impossible instants or chats', () => {
  const listRoutes = ['/v1/campaigns', '/v1/accounts', '/v1/media', '/v1/runs'];
  const impossible = [
    '0000-01-01T00:00:00.000000Z',
    '10000-01-01T00:00:00.000000Z',
    '2030-02-30T00:00:00.000000Z',
    '2030-01-01T25:00:00.000000Z',
    '2030-01-01T23:61:00.000000Z',
    '2030-13-01T00:00:00.000000Z',
  ];
  const cases = listRoutes.flatMap((route) => impossible.map((at) => [route, at] as const));

  test.each(cases)('%s with a cursor at %s → 400 naming cursor, no database text', async (route, at) => {
    const res = await call(api, 'GET', `${route}?cursor=${cursorOf({ at, id: randomUUID() })}`, tenant.token);
    expectRejected(res, 'cursor');
    expect(JSON.stringify(res.body)).not.toMatch(/timestamp|out of range|syntax/i);
  });

  test.each(listRoutes)('%s with a cursor at either end of the storable range → 200', async (route) => {
    for (const at of ['0001-01-01T00:00:00.000000Z', '9999-12-31T23:59:59.999999Z']) {
      const res = await call(api, 'GET', `${route}?cursor=${cursorOf({ at, id: randomUUID() })}`, tenant.token);
      expect(res.status).toBe(200);
    }
  });

  test.each([
    ['NUL', 'a\u0000b'],
    ['LF', 'a\nb'],
    ['257 characters', 'x'.repeat(257)],
  ])("a run's targets with a chat cursor holding %s → 400 naming cursor", async (_, chat) => {
    const { id } = await createCampaign(api, tenant);
    const run = await seedRun(api, id, 'paused', { a: 'pending', b: 'sent' });
    const res = await call(api, 'GET', `/v1/runs/${run.id}/targets?cursor=${cursorOf({ chat })}`, tenant.token);
    expectRejected(res, 'cursor');
  });
});

describe('chat ids', () => {
  test.each([
    ['CR', 'a\rb'],
    ['LF', 'a\nb'],
    ['NUL', 'a\u0000b'],
    ['tab', 'a\tb'],
    ['ESC', '\u001b[31m'],
    ['DEL', 'a\u007fb'],
    ['U+0085 (NEL)', 'a\u0085b'],
    ['U+009F', '\u009f'],
    ['an unpaired surrogate', 'a\ud800'],
    ['nothing', ''],
    ['257 characters', 'x'.repeat(257)],
    ['257 characters outside Latin-1', 'ж'.repeat(257)],
    ['257 emoji', '😀'.repeat(257)],
  ])('a target with %s → 400 naming its index, nothing saved', async (_, chat) => {
    const before = await campaignCount();
    const res = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(accountId, { targets: ['ok-1', 'ok-2', chat] }));
    expectRejected(res, 'targets.2');
    expect(await campaignCount()).toBe(before);

    const { id } = await createCampaign(api, tenant);
    const patched = await call(api, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { targets: [chat] });
    expectRejected(patched, 'targets.0');
    const row = await api.db.selectFrom('campaigns').select('targets').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.targets).toEqual(['chat-1', 'chat-2', 'chat-3']);
  });

  test('every bad target is named, each by its own index', async () => {
    const res = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(accountId, { targets: ['a\nb', 'fine', 'c\rd'] }));
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['targets.0', 'targets.2']);
  });

  test('text in any script, emoji, inner spaces and 256 characters are accepted and kept as given', async () => {
    const targets = ['Привет, чат', '🎉 party 🎉', '群组-123', 'ñandú', 'مجموعة', 'x'.repeat(256), '😀'.repeat(256), '-100123456789', '12036@g.us'];
    const res = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(accountId, { targets }));
    expect(res.status).toBe(201);
    expect(res.body.targets).toEqual(targets);
    const row = await api.db.selectFrom('campaigns').select('targets').where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.targets).toEqual(targets);
    const run = await call(api, 'POST', `/v1/campaigns/${res.body.id}/runs`, tenant.token);
    expect(run.status).toBe(201);
    const listed = await call(api, 'GET', `/v1/runs/${run.body.id}/targets?limit=500`, tenant.token);
    expect(listed.body.items.map((t: { chatId: string }) => t.chatId).sort()).toEqual([...targets].sort());
  });
});
