import { ADMIN_TOKEN, apiForFile, call, campaignBody, createAccount, createCampaign, createTenant, fields, NOW, tenantForFile } from './harness.js';

// What a campaign will do: GET /v1/campaigns/{id}/occurrences and POST /v1/campaigns/preview,
// at a manual clock, daylight-saving changes included.

const api = apiForFile('api_campaign_previews');
const t = tenantForFile(api, 'previews');
let accountId: string;
beforeAll(async () => {
  accountId = await createAccount(api, t);
});
beforeEach(() => api.clock.set(NOW)); // 11:00 in Kuala Lumpur

// Entries of an account's chat directory, as a sync would write them.
const addToDirectory = (account: string, chats: { chatId: string; title: string; canSend?: boolean }[]) =>
  api.db
    .insertInto('chat_directory')
    .values(
      chats.map(({ chatId, title, canSend = true }) => ({
        account_id: account,
        chat_id: chatId,
        title,
        title_folded: title.toLowerCase(),
        kind: 'group' as const,
        member_count: 3,
        can_send: canSend,
        cannot_send_reason: canSend ? null : 'left',
        last_sync_at: new Date(NOW),
        updated_at: new Date(NOW),
      })),
    )
    .execute();
const minutes = (n: number) => new Date(NOW + n * 60_000).toISOString();
const occurrences = (id: string, query = '') => call(api, 'GET', `/v1/campaigns/${id}/occurrences${query}`, t.token);
const campaignCount = async () =>
  Number(
    (
      await api.db
        .selectFrom('campaigns')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('GET /v1/campaigns/{id}/occurrences', () => {
  test('an interval campaign: its next runs every 5 minutes inside its 06:00–18:00 window', async () => {
    const { id } = await createCampaign(api, t);
    const res = await occurrences(id, '?limit=3');
    expect(res.status).toBe(200);
    const close = '2030-01-16T10:00:00.000Z';
    expect(res.body).toEqual({
      items: [
        { scheduledAt: minutes(0), startsAt: minutes(0), windowEndAt: close },
        { scheduledAt: minutes(5), startsAt: minutes(5), windowEndAt: close },
        { scheduledAt: minutes(10), startsAt: minutes(10), windowEndAt: close },
      ],
    });
    expect((await occurrences(id)).body.items).toHaveLength(10);
    expect((await occurrences(id, '?limit=100')).body.items).toHaveLength(100);
  });

  test('a cron in America/New_York across the spring-forward: 09:00 local is 14:00 UTC, then 13:00 UTC', async () => {
    api.clock.set(Date.parse('2030-03-08T12:00:00Z')); // 07:00 EST, Friday; clocks go forward on Sunday 10 March
    const { id } = await createCampaign(api, t, {
      schedule: { type: 'cron', expression: '0 9 * * *' },
      timezone: 'America/New_York',
      deliveryWindow: { start: '08:00', end: '20:00' },
    });
    const res = await occurrences(id, '?limit=4');
    expect(res.body.items).toEqual([
      { scheduledAt: '2030-03-08T14:00:00.000Z', startsAt: '2030-03-08T14:00:00.000Z', windowEndAt: '2030-03-09T01:00:00.000Z' },
      { scheduledAt: '2030-03-09T14:00:00.000Z', startsAt: '2030-03-09T14:00:00.000Z', windowEndAt: '2030-03-10T01:00:00.000Z' },
      { scheduledAt: '2030-03-10T13:00:00.000Z', startsAt: '2030-03-10T13:00:00.000Z', windowEndAt: '2030-03-11T00:00:00.000Z' },
      { scheduledAt: '2030-03-11T13:00:00.000Z', startsAt: '2030-03-11T13:00:00.000Z', windowEndAt: '2030-03-12T00:00:00.000Z' },
    ]);
  });

  test('an occurrence outside the window starts at its opening', async () => {
    // 05:00 daily in Kuala Lumpur, before the 06:00 opening
    const { id } = await createCampaign(api, t, { schedule: { type: 'cron', expression: '0 5 * * *' } });
    expect((await occurrences(id, '?limit=1')).body.items).toEqual([
      { scheduledAt: '2030-01-16T21:00:00.000Z', startsAt: '2030-01-16T22:00:00.000Z', windowEndAt: '2030-01-17T10:00:00.000Z' },
    ]);
  });

  test('a deactivated campaign answers an empty list (with ifActive, the runs an activation now would give); reactivated, its runs are back', async () => {
    const { id } = await createCampaign(api, t);
    expect((await call(api, 'PATCH', `/v1/campaigns/${id}`, t.token, { active: false })).status).toBe(200);
    expect((await occurrences(id)).body).toEqual({ items: [] });
    api.clock.set(NOW + 90_000);
    // ifActive: what the activation below then plans
    const ahead = (await occurrences(id, '?ifActive=true')).body.items;
    expect(ahead).toHaveLength(10);
    expect(fields(await occurrences(id, '?ifActive=yes'))).toEqual(['ifActive']);
    await call(api, 'PATCH', `/v1/campaigns/${id}`, t.token, { active: true });
    expect((await occurrences(id)).body.items).toEqual(ahead);
  });

  test.each(['0', '101', '-1', '2.5', 'ten', ''])('limit=%s is a 400 naming limit', async (limit) => {
    const { id } = await createCampaign(api, t);
    const res = await occurrences(id, `?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['limit']);
  });
});

describe('POST /v1/campaigns/preview', () => {
  test('answers the next 10 runs and what one run takes at the account’s pace; saves nothing', async () => {
    const before = await campaignCount();
    const res = await call(api, 'POST', '/v1/campaigns/preview', t.token, campaignBody(accountId));
    expect(res.status).toBe(200);
    expect(res.body.occurrences).toHaveLength(10);
    expect(res.body.occurrences[1]).toEqual({ scheduledAt: minutes(5), startsAt: minutes(5), windowEndAt: '2030-01-16T10:00:00.000Z' });
    expect(res.body.run).toEqual({
      targets: 3,
      pacedPerMinute: 39.22,
      durationSeconds: 4,
      fitsWindow: true,
      detail:
        "Sending to 3 chats takes about 4 s at the account's pace of 40/min; the first run, from 11:00, ends before the window closes at 18:00 (Asia/Kuala_Lumpur).",
    });
    expect(await campaignCount()).toBe(before);
  });

  test("uses the account's own pace, and says when a run cannot fit its window", async () => {
    const fast = await createAccount(api, t);
    expect((await call(api, 'PATCH', `/v1/accounts/${fast}`, t.token, { maxSendPerMinute: 120 })).status).toBe(200);
    const targets = Array.from({ length: 3000 }, (_, i) => `chat-${i}`);
    // 17:42 in Kuala Lumpur: 18 minutes before the close
    api.clock.set(Date.parse('2030-01-16T09:42:00Z'));
    const res = await call(api, 'POST', '/v1/campaigns/preview', t.token, campaignBody(fast, { targets }));
    expect(res.body.run).toMatchObject({ targets: 3000, pacedPerMinute: 117.65, durationSeconds: Math.ceil((2999 * 510) / 1000), fitsWindow: false });
    // 18 minutes of slots 510 ms apart: 2118 sends
    expect(res.body.run.detail).toBe(
      "Sending to 3000 chats takes about 26 min at the account's pace of 120/min; the first run starts at 17:42 and the window closes at 18:00 (Asia/Kuala_Lumpur): about 2118 of the 3000 chats fit, then the run pauses with the rest pending.",
    );
  });

  test('a cron in America/New_York over the spring-forward: 02:30 runs at 03:00 on the day it does not exist', async () => {
    api.clock.set(Date.parse('2030-03-08T12:00:00Z'));
    const res = await call(
      api,
      'POST',
      '/v1/campaigns/preview',
      t.token,
      campaignBody(accountId, { schedule: { type: 'cron', expression: '30 2 * * *' }, timezone: 'America/New_York', deliveryWindow: undefined }),
    );
    expect(res.status).toBe(200);
    expect(res.body.occurrences.slice(0, 4).map((o: { startsAt: string }) => o.startsAt)).toEqual([
      '2030-03-09T07:30:00.000Z', // 02:30 EST
      '2030-03-10T07:00:00.000Z', // 02:30 does not exist: 03:00 EDT
      '2030-03-11T06:30:00.000Z', // 02:30 EDT
      '2030-03-12T06:30:00.000Z',
    ]);
    expect(res.body.occurrences[0].windowEndAt).toBeNull();
    expect(res.body.run.detail).toMatch(/the window never closes\.$/);
  });

  test('validates exactly as create does: the same 400 naming the same fields, and nothing saved', async () => {
    const other = await createTenant(api, 'other');
    const theirAccount = await createAccount(api, other);
    const bad: Record<string, unknown>[] = [
      { timezone: 'Mars/Olympus', deliveryWindow: { start: '09:00', end: '09:00' } },
      { schedule: { type: 'interval', everySeconds: 10 }, targets: ['a', 'a'] },
      { schedule: { type: 'cron', expression: '* * * * * *' } },
      { accountId: theirAccount },
      { messages: [{ type: 'media', mediaId: '00000000-0000-4000-8000-000000000000' }] },
      { tenantId: other.id },
      { name: '' },
      { unknownField: 1 },
    ];
    const before = await campaignCount();
    for (const extra of bad) {
      const body = campaignBody(accountId, extra);
      const created = await call(api, 'POST', '/v1/campaigns', t.token, body);
      const previewed = await call(api, 'POST', '/v1/campaigns/preview', t.token, body);
      expect(created.status).toBe(400);
      expect({ extra, status: previewed.status, body: previewed.body }).toEqual({ extra, status: 400, body: created.body });
    }
    expect(await campaignCount()).toBe(before);
    // the admin must name the tenant, as for create
    const asAdmin = await call(api, 'POST', '/v1/campaigns/preview', ADMIN_TOKEN, campaignBody(accountId));
    expect(fields(asAdmin)).toEqual(['tenantId']);
    expect((await call(api, 'POST', '/v1/campaigns/preview', ADMIN_TOKEN, { ...campaignBody(accountId), tenantId: t.id })).status).toBe(200);
  });

  test('an inactive campaign has no runs ahead', async () => {
    const res = await call(api, 'POST', '/v1/campaigns/preview', t.token, campaignBody(accountId, { active: false }));
    expect(res.body.occurrences).toEqual([]);
    expect(res.body.run).toMatchObject({ fitsWindow: false, detail: expect.stringMatching(/no run ahead\.$/) });
  });
});

describe('reach', () => {
  test("a campaign's reach: its targets and its audiences' other members, less suppressed and cannot-post chats; the preview answers the same", async () => {
    const account = await createAccount(api, t);
    await addToDirectory(
      account,
      ['r-closed', 'm-closed'].map((chatId) => ({ chatId, title: chatId, canSend: false })),
    );
    expect((await call(api, 'POST', `/v1/accounts/${account}/suppressions`, t.token, { chatIds: ['r-off', 'm-off', 'm-closed'] })).status).toBe(200);
    const audience = await call(api, 'POST', '/v1/audiences', t.token, {
      name: 'reach',
      members: ['r-1', 'm-1', 'm-2', 'm-off', 'm-closed'].map((chatId) => ({ chatId })),
    });
    const body = campaignBody(account, { targets: ['r-1', 'r-2', 'r-off', 'r-closed'], audienceIds: [audience.body.id] });
    const created = await call(api, 'POST', '/v1/campaigns', t.token, body);
    expect(created.status).toBe(201);
    // r-1 is a target and a member: counted once, as a target; m-closed is suppressed and cannot post: counted once, as suppressed
    const reach = { reach: 4, targets: 4, audienceMembers: 4, suppressed: 3, cannotPost: 1 };
    expect((await call(api, 'GET', `/v1/campaigns/${created.body.id}/reach`, t.token)).body).toEqual(reach);
    expect((await call(api, 'POST', '/v1/campaigns/preview', t.token, body)).body.reach).toEqual(reach);
    const other = await createTenant(api, 'reach-other');
    expect((await call(api, 'GET', `/v1/campaigns/${created.body.id}/reach`, other.token)).status).toBe(404);
  });
});

describe('the message as one chat receives it', () => {
  const text = (t: string) => ({ type: 'text', text: t });
  const preview = (body: Record<string, unknown>, query = '') => call(api, 'POST', `/v1/campaigns/preview${query}`, t.token, body);
  // each part's text, and each variable's value with where it came from
  const shown = (message: {
    chatId: string;
    from: string;
    parts: { text: string | null; spans: { text: string; variable: string | null; from: string | null }[] }[];
  }) => ({
    chatId: message.chatId,
    from: message.from,
    texts: message.parts.map((p) => p.text),
    filled: message.parts.flatMap((p) => p.spans.filter((s) => s.variable !== null).map((s) => `${s.variable}=${s.text} (${s.from})`)),
  });

  test('renders each part for the chosen chat: its own name, a built-in title from the directory, the fallback where it has none; the first target by default', async () => {
    const account = await createAccount(api, t);
    await addToDirectory(account, [
      { chatId: 'p-cafe', title: 'Café Central' },
      { chatId: 'p-chess', title: 'Chess Club' },
    ]);
    const body = campaignBody(account, {
      messages: [text('Hello {{name|friends}}, welcome to {{chat.title|our group}}'), text('See you')],
      targets: [{ chatId: 'p-cafe', vars: { name: 'Ann' } }, 'p-chess', 'p-none'],
    });
    const first = await preview(body);
    expect(first.status).toBe(200);
    expect(first.body.message).toMatchObject({ chatId: 'p-cafe', threadId: null, title: 'Café Central', from: 'target' });
    expect(first.body.message.parts[0].spans).toEqual([
      { text: 'Hello ', variable: null, from: null },
      { text: 'Ann', variable: 'name', from: 'own' },
      { text: ', welcome to ', variable: null, from: null },
      { text: 'Café Central', variable: 'chat.title', from: 'directory' },
    ]);
    expect(shown(first.body.message)).toEqual({
      chatId: 'p-cafe',
      from: 'target',
      texts: ['Hello Ann, welcome to Café Central', 'See you'],
      filled: ['name=Ann (own)', 'chat.title=Café Central (directory)'],
    });
    expect(shown((await preview(body, '?chatId=p-chess')).body.message)).toEqual({
      chatId: 'p-chess',
      from: 'target',
      texts: ['Hello friends, welcome to Chess Club', 'See you'],
      filled: ['name=friends (fallback)', 'chat.title=Chess Club (directory)'],
    });
    const bare = (await preview(body, '?chatId=p-none')).body.message;
    expect(bare.title).toBeNull();
    expect(shown(bare).filled).toEqual(['name=friends (fallback)', 'chat.title=our group (fallback)']);
    // a chat that is none of the campaign's is a 400 naming chatId
    const other = await preview(body, '?chatId=p-elsewhere');
    expect(other.status).toBe(400);
    expect(fields(other)).toEqual(['chatId']);
  });

  test("an audience's member: its own variables, the first member by default; a campaign without variables goes as written", async () => {
    const audience = await call(api, 'POST', '/v1/audiences', t.token, {
      name: 'guests',
      members: [{ chatId: 'g-2', vars: { name: 'Bo' } }, { chatId: 'g-1' }],
    });
    const body = campaignBody(accountId, { messages: [text('{{name|friends}}, hi')], targets: [], audienceIds: [audience.body.id] });
    expect(shown((await preview(body)).body.message)).toEqual({ chatId: 'g-1', from: 'audience', texts: ['friends, hi'], filled: ['name=friends (fallback)'] });
    const bo = (await preview(body, '?chatId=g-2')).body.message;
    expect({ title: bo.title, ...shown(bo) }).toEqual({ title: 'Bo', chatId: 'g-2', from: 'audience', texts: ['Bo, hi'], filled: ['name=Bo (own)'] });
    const plain = (await preview(campaignBody(accountId))).body.message;
    expect(plain).toEqual({
      chatId: 'chat-1',
      threadId: null,
      title: null,
      from: 'target',
      parts: [{ type: 'text', text: 'Hello', spans: [{ text: 'Hello', variable: null, from: null }] }],
    });
  });
});

test('/openapi.json documents both', async () => {
  const doc = JSON.parse((await api.app.inject({ method: 'GET', url: '/openapi.json' })).body);
  expect(doc.paths['/v1/campaigns/{id}/occurrences'].get.parameters.map((p: { name: string }) => p.name)).toContain('limit');
  expect(doc.paths['/v1/campaigns/preview'].post).toBeDefined();
  expect(doc.paths['/v1/campaigns/{id}/reach'].get.operationId).toBe('getCampaignReach');
  expect(doc.paths['/v1/campaigns/{id}/occurrences'].get.parameters.map((p: { name: string }) => p.name)).toContain('ifActive');
  expect(Object.keys(doc.components.schemas.Occurrence.properties).sort()).toEqual(['scheduledAt', 'startsAt', 'windowEndAt']);
  expect(doc.paths['/v1/campaigns/preview'].post.parameters.map((p: { name: string }) => p.name)).toEqual(['chatId', 'threadId']);
  expect(doc.components.schemas.PreviewSpan.properties.from.anyOf[0].enum).toEqual(['own', 'directory', 'fallback', 'missing']);
  expect(doc.components.schemas.CampaignPreview.required).toContain('message');
  expect(doc.components.schemas.CampaignPreview.properties.run.required.sort()).toEqual([
    'detail',
    'durationSeconds',
    'fitsWindow',
    'pacedPerMinute',
    'targets',
  ]);
});
