import { apiForFile, BOT, call, campaignBody, createAccount, fields, tenantForFile } from './harness.js';

// Forum topics (CONTRACT §3, campaigns: threadId): a Telegram target may name a topic of its chat;
// the same chat in two topics is two targets, in the campaign, its runs and its audiences. Other
// platforms refuse a topic with a 400 naming the field.

const api = apiForFile('api_forum_topics');
const tenant = tenantForFile(api, 'topics');

const bot = async () => (await call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'telegram', name: 'Bot', credentials: BOT })).body.id as string;

async function targetsOfRun(runId: string): Promise<{ chatId: string; threadId: number | null }[]> {
  const res = await call(api, 'GET', `/v1/runs/${runId}/targets?limit=1`, tenant.token);
  // one a page: the cursor walks a chat's topics too
  const all = [...res.body.items];
  for (let cursor = res.body.nextCursor; cursor; ) {
    const next = await call(api, 'GET', `/v1/runs/${runId}/targets?limit=1&cursor=${cursor}`, tenant.token);
    all.push(...next.body.items);
    cursor = next.body.nextCursor;
  }
  return all.map((t) => ({ chatId: t.chatId, threadId: t.threadId }));
}

async function uploadCsv(audienceId: string, csv: string, query = ''): Promise<{ status: number; body: any }> {
  const res = await api.app.inject({
    method: 'POST',
    url: `/v1/audiences/${audienceId}/members${query}`,
    headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'text/csv' },
    payload: csv,
  });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

test('a bot campaign takes the same chat in two topics and in General: three targets, shown as given, each a target of its runs', async () => {
  const targets = ['-1001', { chatId: '-1001', threadId: 5 }, { chatId: '-1001', threadId: 7, vars: { name: 'Ann' } }, 'chat-2'];
  const created = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(await bot(), { targets }));
  expect(created.status).toBe(201);
  expect(created.body.targets).toEqual(targets);
  expect((await call(api, 'GET', `/v1/campaigns/${created.body.id}`, tenant.token)).body.targets).toEqual(targets);

  const run = await call(api, 'POST', `/v1/campaigns/${created.body.id}/runs`, tenant.token, {});
  expect(run.status).toBe(201);
  expect(run.body.counts.total).toBe(4);
  expect(await targetsOfRun(run.body.id)).toEqual([
    { chatId: '-1001', threadId: null },
    { chatId: '-1001', threadId: 5 },
    { chatId: '-1001', threadId: 7 },
    { chatId: 'chat-2', threadId: null },
  ]);
  // the topic's variables went with it, not to the chat's other targets
  const vars = await api.db
    .selectFrom('run_targets')
    .select(['thread_id', 'vars'])
    .where('run_id', '=', run.body.id)
    .where('chat_id', '=', '-1001')
    .orderBy('thread_id')
    .execute();
  expect(vars).toEqual([
    { thread_id: 0, vars: null },
    { thread_id: 5, vars: null },
    { thread_id: 7, vars: { name: 'Ann' } },
  ]);
});

test('the same chat in the same topic twice is a repeat; a bad threadId is a 400 naming the field', async () => {
  const account = await bot();
  const repeated = await call(
    api,
    'POST',
    '/v1/campaigns',
    tenant.token,
    campaignBody(account, { targets: [{ chatId: 'x', threadId: 3 }, 'x', { chatId: 'x', threadId: 3 }] }),
  );
  expect(repeated.status).toBe(400);
  expect(fields(repeated)).toEqual(['targets']);
  expect(repeated.body.error.details[0].message).toContain('"x" topic 3');
  for (const threadId of [0, -2, 1.5, '5', 2 ** 31]) {
    const bad = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(account, { targets: [{ chatId: 'x', threadId }] }));
    expect(bad.status).toBe(400);
    // named by the field, or by the target with the field first in its message (CONTRACT, personal messages)
    const [detail] = bad.body.error.details;
    expect(`${detail.field} ${detail.message}`).toMatch(/^targets\.0(\.threadId | threadId: )/);
  }
});

test('an account of another platform refuses a topic, naming each target that gives one; a PATCH to such an account too', async () => {
  const http = await createAccount(api, tenant);
  const refused = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(http, { targets: ['a', { chatId: 'b', threadId: 9 }] }));
  expect(refused.status).toBe(400);
  expect(fields(refused)).toEqual(['targets.1.threadId']);
  expect(refused.body.error.details[0].message).toBe("forum topics are Telegram's (telegram, telegram_user accounts); this account's platform (http) has none");

  const onBot = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(await bot(), { targets: ['a', { chatId: 'b', threadId: 9 }] }));
  expect(onBot.status).toBe(201);
  const moved = await call(api, 'PATCH', `/v1/campaigns/${onBot.body.id}`, tenant.token, { accountId: http });
  expect(moved.status).toBe(400);
  expect(fields(moved)).toEqual(['targets.1.threadId']);
  // an edit of anything else keeps the topic
  const renamed = await call(api, 'PATCH', `/v1/campaigns/${onBot.body.id}`, tenant.token, { name: 'renamed' });
  expect(renamed.body.targets).toEqual(['a', { chatId: 'b', threadId: 9 }]);
});

test('a test send goes to a topic on a bot; elsewhere a topic is a 400 naming threadId', async () => {
  const onBot = (await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(await bot(), { active: false }))).body.id;
  const sent = await call(api, 'POST', `/v1/campaigns/${onBot}/test-sends`, tenant.token, { chatId: '-1009', threadId: 12 });
  expect(sent.status).toBe(202);
  expect(await targetsOfRun(sent.body.id)).toEqual([{ chatId: '-1009', threadId: 12 }]);

  const onHttp = (await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(await createAccount(api, tenant), { active: false }))).body.id;
  const refused = await call(api, 'POST', `/v1/campaigns/${onHttp}/test-sends`, tenant.token, { chatId: 'c', threadId: 12 });
  expect(refused.status).toBe(400);
  expect(fields(refused)).toEqual(['threadId']);
});

test('a CSV with a threadId column: a chat in two topics is two members, shown, exported and sent to as such', async () => {
  const audience = (await call(api, 'POST', '/v1/audiences', tenant.token, { name: 'forum' })).body.id;
  const csv = 'chatId,ThreadId,name\n-1001,,General\n-1001,5,Five\n-1001,7,Seven\n-1001,5,Five again\n';
  expect(await uploadCsv(audience, csv, '?dryRun=true')).toEqual({
    status: 200,
    body: {
      added: 3,
      updated: 0,
      preview: [
        { chatId: '-1001', vars: { name: 'General' } },
        { chatId: '-1001', threadId: 7, vars: { name: 'Seven' } },
        { chatId: '-1001', threadId: 5, vars: { name: 'Five again' } },
      ],
    },
  });
  expect(await uploadCsv(audience, csv)).toEqual({ status: 200, body: { added: 3, updated: 0 } });
  expect(await uploadCsv(audience, 'chatId,threadId\n-1001,7\n')).toEqual({ status: 200, body: { added: 0, updated: 1 } });
  const listed = await call(api, 'GET', `/v1/audiences/${audience}/members?limit=2`, tenant.token);
  const rest = await call(api, 'GET', `/v1/audiences/${audience}/members?limit=2&cursor=${listed.body.nextCursor}`, tenant.token);
  expect([...listed.body.items, ...rest.body.items]).toEqual([
    { chatId: '-1001', vars: { name: 'General' } },
    { chatId: '-1001', threadId: 5, vars: { name: 'Five again' } },
    { chatId: '-1001', threadId: 7, vars: null },
  ]);
  const exported = await api.app.inject({ method: 'GET', url: `/v1/audiences/${audience}/members.csv`, headers: { authorization: `Bearer ${tenant.token}` } });
  // a leading - is escaped as a formula start (csv-cell.ts), and read back unescaped
  expect(exported.body).toBe("\ufeffchatId,threadId,name\r\n'-1001,,General\r\n'-1001,5,Five again\r\n'-1001,7,\r\n");
  expect(await uploadCsv(audience, exported.body)).toEqual({ status: 200, body: { added: 0, updated: 3 } });

  // the inline target in topic 5 wins over the member in topic 5; the others come from the audience
  const body = campaignBody(await bot(), { targets: [{ chatId: '-1001', threadId: 5, vars: { name: 'inline' } }], audienceIds: [audience], active: false });
  const created = await call(api, 'POST', '/v1/campaigns', tenant.token, body);
  expect(created.status).toBe(201);
  const run = await call(api, 'POST', `/v1/campaigns/${created.body.id}/runs`, tenant.token, {});
  expect(run.body.counts.total).toBe(3);
  const rows = await api.db.selectFrom('run_targets').select(['thread_id', 'vars']).where('run_id', '=', run.body.id).orderBy('thread_id').execute();
  expect(rows).toEqual([
    { thread_id: 0, vars: { name: 'General' } },
    { thread_id: 5, vars: { name: 'inline' } },
    { thread_id: 7, vars: null },
  ]);
});

test('an audience with members in topics is refused for a campaign of another platform; members in topics added later are left out of its runs', async () => {
  const http = await createAccount(api, tenant);
  const topics = (await call(api, 'POST', '/v1/audiences', tenant.token, { name: 'with-topics', members: [{ chatId: 'g', threadId: 3 }] })).body.id;
  const refused = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(http, { targets: ['a'], audienceIds: [topics] }));
  expect(refused.status).toBe(400);
  expect(fields(refused)).toEqual(['audienceIds.0']);
  expect(refused.body.error.details[0].message).toContain("this audience has members in forum topics: forum topics are Telegram's");

  const plain = (await call(api, 'POST', '/v1/audiences', tenant.token, { name: 'plain', members: [{ chatId: 'g' }] })).body.id;
  const created = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(http, { targets: ['a'], audienceIds: [plain], active: false }));
  expect(created.status).toBe(201);
  expect((await call(api, 'POST', `/v1/audiences/${plain}/members`, tenant.token, { members: [{ chatId: 'g', threadId: 4 }] })).status).toBe(200);
  const run = await call(api, 'POST', `/v1/campaigns/${created.body.id}/runs`, tenant.token, {});
  expect(run.body.counts.total).toBe(2);
  expect(await targetsOfRun(run.body.id)).toEqual([
    { chatId: 'a', threadId: null },
    { chatId: 'g', threadId: null },
  ]);
});

test('a bad threadId cell is a 400 naming its line and column; nothing is saved', async () => {
  const audience = (await call(api, 'POST', '/v1/audiences', tenant.token, { name: 'bad-topics' })).body.id;
  const res = await uploadCsv(audience, 'chatId,threadId\na,1\nb,0\nc,x\nd,2147483648\n');
  expect(res.status).toBe(400);
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([
    'line 3, column threadId',
    'line 4, column threadId',
    'line 5, column threadId',
  ]);
  expect(res.body.error.details[0].message).toBe('a forum topic id is a whole number from 1 to 2147483647, or empty for none');
  expect((await call(api, 'GET', `/v1/audiences/${audience}`, tenant.token)).body.memberCount).toBe(0);
});

test('the export names each target and member with its topic (thread_id, 0 for none), and each campaign its target_threads', async () => {
  const res = await api.app.inject({ method: 'GET', url: '/v1/export', headers: { authorization: `Bearer ${tenant.token}` } });
  expect(res.statusCode).toBe(200);
  const lines = res.body
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
  const of = (type: string) => lines.filter((l) => l.type === type && l.data['chat_id'] === '-1001').map((l) => l.data['thread_id']);
  // the first test's run (General, 5, 7) and the audience runs' (General, 5, 7 twice over)
  expect(of('run_target').sort()).toEqual([0, 0, 5, 5, 7, 7]);
  expect(of('audience_member').sort()).toEqual([0, 5, 7]);
  const campaigns = lines.filter((l) => l.type === 'campaign').map((l) => l.data['target_threads']);
  expect(campaigns).toContainEqual([0, 5, 7, 0]);
});

test("erasing a chat takes it out of every topic: the campaign's targets (topics kept in step), the audience's members and counts", async () => {
  const audience = (
    await call(api, 'POST', '/v1/audiences', tenant.token, {
      name: 'erase-me',
      members: [{ chatId: 'e' }, { chatId: 'e', threadId: 2 }, { chatId: 'f', threadId: 2 }],
    })
  ).body.id;
  const targets = [{ chatId: 'e', threadId: 2, vars: { name: 'x' } }, 'f', 'e', { chatId: 'f', threadId: 9, vars: { name: 'y' } }];
  const body = campaignBody(await bot(), { targets, messages: [{ type: 'text', text: 'Hi {{name|you}}' }], active: false });
  const id = (await call(api, 'POST', '/v1/campaigns', tenant.token, body)).body.id;
  const erased = await call(api, 'POST', '/v1/chats/erase', tenant.token, { chatId: 'e' });
  expect(erased.status).toBe(200);
  expect(erased.body).toMatchObject({ campaigns: 1, audienceMembers: 2 });
  expect((await call(api, 'GET', `/v1/campaigns/${id}`, tenant.token)).body.targets).toEqual(['f', { chatId: 'f', threadId: 9, vars: { name: 'y' } }]);
  expect((await call(api, 'GET', `/v1/audiences/${audience}`, tenant.token)).body.memberCount).toBe(1);
});

test('a test send as a chat that is a target only in a topic takes that target’s variables', async () => {
  const body = campaignBody(await bot(), {
    targets: [{ chatId: 'v', threadId: 3, vars: { name: 'Topic Ann' } }],
    messages: [{ type: 'text', text: 'Hi {{name}}' }],
    active: false,
  });
  const id = (await call(api, 'POST', '/v1/campaigns', tenant.token, body)).body.id;
  const sent = await call(api, 'POST', `/v1/campaigns/${id}/test-sends`, tenant.token, { chatId: 'me', asChatId: 'v' });
  expect(sent.status).toBe(202);
  const [row] = await api.db.selectFrom('run_targets').select(['chat_id', 'vars']).where('run_id', '=', sent.body.id).execute();
  expect(row).toEqual({ chat_id: 'me', vars: { name: 'Topic Ann' } });
});
