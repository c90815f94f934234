import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN, call, campaignBody, createAccount, createTenant, fields, startApi, type Api, type Tenant } from './harness.js';

// /v1/audiences: CRUD and tenant isolation, members in JSON and CSV (BOM, `;`, quotes, vars,
// repeats), every bad upload a 400 that saves nothing, the export's formula escape, search, and
// the campaign's audienceIds rules.

let api: Api;
let mine: Tenant;
let theirs: Tenant;
beforeAll(async () => {
  api = await startApi('api_audiences');
  mine = await createTenant(api, 'mine');
  theirs = await createTenant(api, 'theirs');
}, 30_000);
afterAll(async () => api.close());

async function newAudience(tenant: Tenant, members?: unknown[]): Promise<string> {
  const res = await call(api, 'POST', '/v1/audiences', tenant.token, { name: `list-${randomUUID().slice(0, 8)}`, ...(members && { members }) });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function uploadCsv(id: string, csv: string | Buffer, query = ''): Promise<{ status: number; body: any }> {
  const res = await api.app.inject({
    method: 'POST',
    url: `/v1/audiences/${id}/members${query}`,
    headers: { authorization: `Bearer ${mine.token}`, 'content-type': 'text/csv' },
    payload: csv,
  });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

async function allMembers(id: string): Promise<{ chatId: string; vars: Record<string, string> | null }[]> {
  const res = await call(api, 'GET', `/v1/audiences/${id}/members?limit=500`, mine.token);
  expect(res.status).toBe(200);
  return res.body.items;
}

test('create, read, list, rename and delete; another tenant sees a 404 exactly as for a missing one', async () => {
  const created = await call(api, 'POST', '/v1/audiences', mine.token, {
    name: 'VIPs',
    members: [{ chatId: 'chat-b', vars: { name: 'Bo' } }, { chatId: 'chat-a' }],
  });
  expect(created.status).toBe(201);
  expect(created.body).toEqual({
    id: expect.any(String),
    tenantId: mine.id,
    name: 'VIPs',
    memberCount: 2,
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  });
  const id = created.body.id;
  expect((await call(api, 'GET', `/v1/audiences/${id}`, mine.token)).body).toEqual(created.body);
  expect(await allMembers(id)).toEqual([
    { chatId: 'chat-a', vars: null },
    { chatId: 'chat-b', vars: { name: 'Bo' } },
  ]);

  // same name in the same tenant: 409; in another tenant: fine
  expect((await call(api, 'POST', '/v1/audiences', mine.token, { name: 'VIPs' })).status).toBe(409);
  expect((await call(api, 'POST', '/v1/audiences', theirs.token, { name: 'VIPs' })).status).toBe(201);

  const renamed = await call(api, 'PATCH', `/v1/audiences/${id}`, mine.token, { name: 'Very important' });
  expect(renamed.body).toMatchObject({ id, name: 'Very important', memberCount: 2 });

  // theirs: every route answers as for a missing audience, and nothing of mine changes
  for (const [method, url, body] of [
    ['GET', `/v1/audiences/${id}`, undefined],
    ['PATCH', `/v1/audiences/${id}`, { name: 'taken' }],
    ['GET', `/v1/audiences/${id}/members`, undefined],
    ['GET', `/v1/audiences/${id}/members.csv`, undefined],
    ['POST', `/v1/audiences/${id}/members`, { members: [{ chatId: 'x' }] }],
    ['DELETE', `/v1/audiences/${id}/members`, { chatIds: ['chat-a'] }],
    ['DELETE', `/v1/audiences/${id}`, undefined],
  ] as const) {
    const foreign = await call(api, method, url, theirs.token, body);
    const missing = await call(api, method, url.replace(id, randomUUID()), mine.token, body);
    expect({ method, url, status: foreign.status, body: foreign.body }).toEqual({ method, url, status: 404, body: missing.body });
  }
  expect((await call(api, 'GET', '/v1/audiences', theirs.token)).body.items.map((a: { id: string }) => a.id)).not.toContain(id);
  expect((await call(api, 'GET', '/v1/audiences', ADMIN_TOKEN)).body.items.map((a: { id: string }) => a.id)).toContain(id);
  expect(await allMembers(id)).toHaveLength(2);

  expect((await call(api, 'DELETE', `/v1/audiences/${id}`, mine.token)).status).toBe(204);
  expect((await call(api, 'GET', `/v1/audiences/${id}`, mine.token)).status).toBe(404);
  const left = await api.db.selectFrom('audience_members').select('chat_id').where('audience_id', '=', id).execute();
  expect(left).toEqual([]);
});

test('the admin names the owner on create; lists are paged newest first', async () => {
  expect(fields(await call(api, 'POST', '/v1/audiences', ADMIN_TOKEN, { name: 'x' }))).toEqual(['tenantId']);
  expect(fields(await call(api, 'POST', '/v1/audiences', ADMIN_TOKEN, { name: 'x', tenantId: randomUUID() }))).toEqual(['tenantId']);
  const tenant = await createTenant(api, 'pager');
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    api.clock.advance(1_000);
    const res = await call(api, 'POST', '/v1/audiences', ADMIN_TOKEN, { name: `p${i}`, tenantId: tenant.id });
    expect(res.body.tenantId).toBe(tenant.id);
    ids.unshift(res.body.id);
  }
  const first = await call(api, 'GET', '/v1/audiences?limit=2', tenant.token);
  const second = await call(api, 'GET', `/v1/audiences?limit=2&cursor=${first.body.nextCursor}`, tenant.token);
  expect([...first.body.items, ...second.body.items].map((a: { id: string }) => a.id)).toEqual(ids);
  expect(second.body.nextCursor).toBeNull();
});

test('members: add or update in bulk (repeats merged, later wins), page in chat order, search any case and accent, remove', async () => {
  const id = await newAudience(mine, [{ chatId: 'c1', vars: { city: 'Oslo' } }]);
  const added = await call(api, 'POST', `/v1/audiences/${id}/members`, mine.token, {
    members: [
      { chatId: 'c3', vars: { city: 'Zürich' } },
      { chatId: 'c1', vars: { city: 'Bergen' } },
      { chatId: 'c2', vars: { city: 'Café Town' } },
      { chatId: 'c3', vars: { city: 'Genève' } },
    ],
  });
  expect(added.body).toEqual({ added: 2, updated: 1 });
  expect((await call(api, 'GET', `/v1/audiences/${id}`, mine.token)).body.memberCount).toBe(3);
  expect(await allMembers(id)).toEqual([
    { chatId: 'c1', vars: { city: 'Bergen' } },
    { chatId: 'c2', vars: { city: 'Café Town' } },
    { chatId: 'c3', vars: { city: 'Genève' } },
  ]);

  const page1 = await call(api, 'GET', `/v1/audiences/${id}/members?limit=2`, mine.token);
  const page2 = await call(api, 'GET', `/v1/audiences/${id}/members?limit=2&cursor=${page1.body.nextCursor}`, mine.token);
  expect([...page1.body.items, ...page2.body.items].map((m: { chatId: string }) => m.chatId)).toEqual(['c1', 'c2', 'c3']);
  expect(page2.body.nextCursor).toBeNull();

  const search = async (q: string) =>
    (await call(api, 'GET', `/v1/audiences/${id}/members?query=${encodeURIComponent(q)}`, mine.token)).body.items.map((m: { chatId: string }) => m.chatId);
  expect(await search('CAFE')).toEqual(['c2']);
  expect(await search('geneve')).toEqual(['c3']);
  expect(await search('C1')).toEqual(['c1']);
  expect(await search('%')).toEqual([]);
  // the search text joins the values with U+001F, which a query cannot hold
  expect((await call(api, 'GET', `/v1/audiences/${id}/members?query=${encodeURIComponent('c1\u001fbergen')}`, mine.token)).status).toBe(400);

  const removed = await call(api, 'DELETE', `/v1/audiences/${id}/members`, mine.token, { chatIds: ['c1', 'c9'] });
  expect(removed.body).toEqual({ removed: 1 });
  expect((await call(api, 'GET', `/v1/audiences/${id}`, mine.token)).body.memberCount).toBe(2);
});

test('CSV: a BOM, `;`, quoted fields (a delimiter, a quote and a line break inside), variables, empty cells', async () => {
  const id = await newAudience(mine);
  const csv = '\ufeffChatId;name;note\r\n"chat;1";Ann;"said ""hi""\nthen left"\r\nchat-2;Bo;\r\n\r\n';
  const res = await uploadCsv(id, Buffer.from(csv, 'utf8'));
  expect(res).toEqual({ status: 200, body: { added: 2, updated: 0 } });
  expect(await allMembers(id)).toEqual([
    { chatId: 'chat-2', vars: { name: 'Bo' } },
    { chatId: 'chat;1', vars: { name: 'Ann', note: 'said "hi"\nthen left' } },
  ]);
  // `,` too, with a repeated chat: the later row wins
  const again = await uploadCsv(id, 'chatId,name\nchat-2,Bob\nchat-3,Cy\nchat-2,Bobby\n');
  expect(again.body).toEqual({ added: 1, updated: 1 });
  expect((await allMembers(id)).find((m) => m.chatId === 'chat-2')?.vars).toEqual({ name: 'Bobby' });
});

test('CSV dry run: the counts and the first 10 members, nothing saved', async () => {
  const id = await newAudience(mine, [{ chatId: 'r00' }]);
  const rows = Array.from({ length: 12 }, (_, i) => `r${String(i).padStart(2, '0')},v${i}`).join('\n');
  const res = await uploadCsv(id, `chatId,tag\n${rows}\n`, '?dryRun=true');
  expect(res.status).toBe(200);
  expect(res.body.added).toBe(11);
  expect(res.body.updated).toBe(1);
  expect(res.body.preview).toHaveLength(10);
  expect(res.body.preview[0]).toEqual({ chatId: 'r00', vars: { tag: 'v0' } });
  expect(await allMembers(id)).toEqual([{ chatId: 'r00', vars: null }]);
});

test('every bad upload is a clear 400 and saves nothing', async () => {
  const id = await newAudience(mine, [{ chatId: 'keep', vars: { name: 'Kept' } }]);
  const long = 'x'.repeat(1001);
  const cases: [string, string | Buffer, string[]][] = [
    ['a bad row names its line and column', `chatId,name\nok-1,Ann\nok-2,${long}\nok-3,Cy\n`, ['line 3, column name']],
    ['an empty chat id', 'chatId,name\n,Ann\n', ['line 2, column chatId']],
    ['a control character in a chat id', 'chatId\n"a\tb"\n', ['line 2, column chatId']],
    ['a row with too many fields', 'chatId,name\na,b,c\n', ['line 2']],
    ['an unclosed quote', 'chatId,name\na,"b\n', ['line 2']],
    ['no chatId column', 'chat,name\na,b\n', ['line 1']],
    ['a column that is not a variable name', 'chatId,first name\na,b\n', ['line 1, column first name']],
    ['a header only', 'chatId,name\n', ['body']],
    ['an empty body', '', ['body']],
    ['not UTF-8 (Latin-1 é)', Buffer.concat([Buffer.from('chatId,name\na,Ren'), Buffer.from([0xe9]), Buffer.from('\n')]), ['body']],
  ];
  for (const [name, csv, expected] of cases) {
    const res = await uploadCsv(id, csv);
    expect({ name, status: res.status, fields: fields(res as never) }).toEqual({ name, status: 400, fields: expected });
  }
  const tooMany = `chatId\n${Array.from({ length: 100_001 }, (_, i) => `c${i}`).join('\n')}\n`;
  const res = await uploadCsv(id, tooMany);
  expect(res.status).toBe(400);
  expect(res.body.error.message).toContain('more than 100000 rows');
  // a JSON upload with one bad member: nothing of the good ones either
  const json = await call(api, 'POST', `/v1/audiences/${id}/members`, mine.token, {
    members: [{ chatId: 'good' }, { chatId: 'bad', vars: { 'no spaces': 'x' } }],
  });
  expect(json.status).toBe(400);
  expect(await allMembers(id)).toEqual([{ chatId: 'keep', vars: { name: 'Kept' } }]);
  expect((await call(api, 'GET', `/v1/audiences/${id}`, mine.token)).body.memberCount).toBe(1);
}, 60_000);

test('export: CSV with a BOM, formula-looking cells escaped with a quote, and it uploads back unchanged', async () => {
  const members = [
    { chatId: '=cmd|calc', vars: { name: '+1', note: '@SUM(A1)' } },
    { chatId: '-1001156971559', vars: { name: '\tTab' } },
    { chatId: 'plain', vars: { name: 'Ann, "A"' } },
  ];
  const id = await newAudience(mine, members);
  const res = await api.app.inject({ method: 'GET', url: `/v1/audiences/${id}/members.csv`, headers: { authorization: `Bearer ${mine.token}` } });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
  expect(res.body).toBe('\ufeffchatId,name,note\r\n\'-1001156971559,\'\tTab,\r\n\'=cmd|calc,\'+1,\'@SUM(A1)\r\nplain,"Ann, ""A""",\r\n');

  const copy = await newAudience(mine);
  expect((await uploadCsv(copy, res.rawPayload)).status).toBe(200);
  expect(await allMembers(copy)).toEqual(await allMembers(id));
});

test('campaigns: audienceIds of the tenant, shown in the answer; an audience a campaign names cannot be deleted', async () => {
  const accountId = await createAccount(api, mine);
  const audienceId = await newAudience(mine, [{ chatId: 'm1', vars: { name: 'Ann' } }]);
  const theirsId = await newAudience(theirs);
  const created = await call(api, 'POST', '/v1/campaigns', mine.token, campaignBody(accountId, { targets: undefined, audienceIds: [audienceId] }));
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ targets: [], audienceIds: [audienceId] });
  // the preview counts the chats a run would have: targets and members, each once
  const preview = await call(api, 'POST', '/v1/campaigns/preview', mine.token, campaignBody(accountId, { targets: ['m1', 't1'], audienceIds: [audienceId] }));
  expect(preview.body.run.targets).toBe(2);

  const bad = async (extra: Record<string, unknown>) => fields(await call(api, 'POST', '/v1/campaigns', mine.token, campaignBody(accountId, extra)));
  expect(await bad({ audienceIds: [theirsId] })).toEqual(['audienceIds.0']);
  expect(await bad({ audienceIds: [audienceId, randomUUID()] })).toEqual(['audienceIds.1']);
  expect(await bad({ audienceIds: [audienceId, audienceId] })).toEqual(['audienceIds.1']);
  expect(await bad({ targets: [], audienceIds: [] })).toEqual(['targets']);
  // every member needs the variables the texts use
  const noVars = await newAudience(mine, [{ chatId: 'z1' }]);
  const missing = await call(
    api,
    'POST',
    '/v1/campaigns',
    mine.token,
    campaignBody(accountId, { messages: [{ type: 'text', text: 'Hi {{name}}' }], targets: [], audienceIds: [audienceId, noVars] }),
  );
  expect(missing.body.error.details).toEqual([
    { field: 'audienceIds.1', message: 'messages.0.text uses {{name}}, and member "z1" of this audience has no value for it' },
  ]);
  // ... unless the chat is also an inline target with them
  const inline = await call(
    api,
    'POST',
    '/v1/campaigns',
    mine.token,
    campaignBody(accountId, { messages: [{ type: 'text', text: 'Hi {{name}}' }], targets: [{ chatId: 'z1', vars: { name: 'Zed' } }], audienceIds: [noVars] }),
  );
  expect(inline.status).toBe(201);

  const refused = await call(api, 'DELETE', `/v1/audiences/${audienceId}`, mine.token);
  expect(refused.status).toBe(409);
  expect(refused.body.error.details).toEqual([{ field: `campaigns.${created.body.id}`, message: 'campaign "Morning reminder" sends to this audience' }]);
  const patched = await call(api, 'PATCH', `/v1/campaigns/${created.body.id}`, mine.token, { targets: ['t1'], audienceIds: [] });
  expect(patched.body).toMatchObject({ targets: ['t1'], audienceIds: [] });
  expect((await call(api, 'DELETE', `/v1/audiences/${audienceId}`, mine.token)).status).toBe(204);
});
