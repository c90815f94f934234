import { randomUUID } from 'node:crypto';
import { ChatDirectoryRepository } from '@metronome/db';
import { targetsCsv } from '../../console/src/run-csv.js';
import { RUN_CSV_COLUMNS } from '../helpers/run-csv-columns.js';
import { apiForFile, call, campaignBody, createAccount, createTenant, tenantForFile } from './harness.js';

// Chats by name where an id stood (issue 51, point 4): a run's targets carry the title the run's
// account's directory gives the chat, else the chat's own `name` (an audience member's); the
// console's CSV of a run's chats (console/src/csv.ts, built from these answers) appends it; and a
// campaign's own chats are listed with their titles and variables, searchable by name, for the
// test form to render a test as one of them.

const api = apiForFile('api_chat_titles');
const t = tenantForFile(api, 'titles');
let accountId: string;
// a title from the platform that a spreadsheet would run, with a right-to-left override in it
const HOSTILE = "=cmd|' /C calc'!A0 \u202Eevil";
beforeAll(async () => {
  accountId = await createAccount(api, t);
  await new ChatDirectoryRepository(api.db).upsert(
    accountId,
    [
      { chatId: 'g-1', title: 'Café Central', kind: 'group', memberCount: 9, canSend: true, cannotSendReason: null },
      { chatId: 'g-2', title: HOSTILE, kind: 'group', memberCount: 3, canSend: true, cannotSendReason: null },
      // a directory entry without a title: the member's own name names it
      { chatId: 'd-1', title: null, kind: 'direct', memberCount: null, canSend: true, cannotSendReason: null },
    ],
    new Date(),
  );
  // another account's directory (another tenant's) titles nothing of this account's runs
  const other = await createAccount(api, await createTenant(api, 'titles-other'));
  await new ChatDirectoryRepository(api.db).upsert(
    other,
    [{ chatId: 'zz', title: 'Secret', kind: 'group', memberCount: 2, canSend: true, cannotSendReason: null }],
    new Date(),
  );
});

async function greeting(text: string) {
  const audience = await call(api, 'POST', '/v1/audiences', t.token, {
    name: `a-${randomUUID().slice(0, 8)}`,
    members: [
      { chatId: 'd-1', vars: { name: 'Dee' } },
      { chatId: 'm-2', vars: { name: 'Émile' } },
      { chatId: 'm-3', vars: { city: 'Oslo' } },
    ],
  });
  expect(audience.status).toBe(201);
  const targets = ['g-1', { chatId: 'g-2', vars: { name: 'Group two' } }, 'zz'];
  const created = await call(api, 'POST', '/v1/campaigns', t.token, {
    ...campaignBody(accountId, { messages: [{ type: 'text', text }] }),
    targets,
    audienceIds: [audience.body.id],
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

test("a run's targets carry the directory's title, else the chat's own name; the CSV of them appends it", async () => {
  const campaignId = await greeting('Hi {{name|friends}}');
  const run = await call(api, 'POST', `/v1/campaigns/${campaignId}/runs`, t.token, {});
  expect(run.status).toBe(201);
  const page = await call(api, 'GET', `/v1/runs/${run.body.id}/targets?limit=500`, t.token);
  expect(page.status).toBe(200);
  const titles = Object.fromEntries(page.body.items.map((i: { chatId: string; title: string | null }) => [i.chatId, i.title]));
  // the directory's title wins over the chat's name; an entry without one falls back to it
  expect(titles).toEqual({ 'd-1': 'Dee', 'g-1': 'Café Central', 'g-2': HOSTILE, 'm-2': 'Émile', 'm-3': null, zz: null });
  // filters and pages keep them (the statement's joins qualify every column)
  const pending = await call(api, 'GET', `/v1/runs/${run.body.id}/targets?status=pending&delivered=false&limit=2`, t.token);
  expect(pending.status).toBe(200);
  expect(pending.body.items.map((i: { title: string | null }) => i.title)).toEqual(['Dee', 'Café Central']);
  const next = await call(api, 'GET', `/v1/runs/${run.body.id}/targets?status=pending&limit=2&cursor=${pending.body.nextCursor}`, t.token);
  expect(next.body.items.map((i: { title: string | null }) => i.title)).toEqual([HOSTILE, 'Émile']);

  // the console's CSV: every earlier column in its place, the title last, under the one CSV rule
  const csv = targetsCsv(page.body.items);
  const [head, ...lines] = csv.split('\r\n').filter(Boolean);
  expect(head!.split(',')).toEqual(RUN_CSV_COLUMNS);
  expect(lines.map((l) => l.slice(0, l.indexOf(',')))).toEqual(['d-1', 'g-1', 'g-2', 'm-2', 'm-3', 'zz']);
  expect(lines[1]!.endsWith(',Café Central')).toBe(true);
  // outside text keeps to the CSV rule: a formula start is neutralised, as csv-cell writes it
  expect(lines[2]!.endsWith(`,'${HOSTILE}`)).toBe(true);
  expect(lines[4]!.endsWith(',')).toBe(true);
});

test("a campaign's own chats: targets then its audiences' other members, each with its title, its variables and its built-ins", async () => {
  const campaignId = await greeting('Hi {{name|there}} in {{chat.title|your chat}}');
  const all = await call(api, 'GET', `/v1/campaigns/${campaignId}/chats`, t.token);
  expect(all.status).toBe(200);
  expect(all.body).toEqual({
    items: [
      { chatId: 'd-1', threadId: null, title: 'Dee', from: 'audience', vars: { name: 'Dee' }, builtins: { 'chat.kind': 'direct' } },
      {
        chatId: 'g-1',
        threadId: null,
        title: 'Café Central',
        from: 'target',
        vars: {},
        builtins: { 'chat.title': 'Café Central', 'chat.kind': 'group', 'chat.memberCount': '9' },
      },
      {
        chatId: 'g-2',
        threadId: null,
        title: HOSTILE,
        from: 'target',
        vars: { name: 'Group two' },
        builtins: { 'chat.title': HOSTILE, 'chat.kind': 'group', 'chat.memberCount': '3' },
      },
      { chatId: 'm-2', threadId: null, title: 'Émile', from: 'audience', vars: { name: 'Émile' }, builtins: {} },
      { chatId: 'm-3', threadId: null, title: null, from: 'audience', vars: { city: 'Oslo' }, builtins: {} },
      { chatId: 'zz', threadId: null, title: null, from: 'target', vars: {}, builtins: {} },
    ],
    nextCursor: null,
  });
  // by name, any case, accents folded: a directory title, a member's name, a chat id
  const ids = async (query: string) =>
    (await call(api, 'GET', `/v1/campaigns/${campaignId}/chats?query=${encodeURIComponent(query)}`, t.token)).body.items.map(
      (i: { chatId: string }) => i.chatId,
    );
  expect(await ids('CAFE')).toEqual(['g-1']);
  expect(await ids('emile')).toEqual(['m-2']);
  expect(await ids('two')).toEqual(['g-2']);
  expect(await ids('M-3')).toEqual(['m-3']);
  expect(await ids('secret')).toEqual([]); // another tenant's directory titles nothing here
  expect(await ids('%')).toEqual([]); // a pattern character is matched as itself
  // page by page, every chat once
  const first = await call(api, 'GET', `/v1/campaigns/${campaignId}/chats?limit=4`, t.token);
  const second = await call(api, 'GET', `/v1/campaigns/${campaignId}/chats?limit=4&cursor=${first.body.nextCursor}`, t.token);
  expect([...first.body.items, ...second.body.items].map((i: { chatId: string }) => i.chatId)).toEqual(['d-1', 'g-1', 'g-2', 'm-2', 'm-3', 'zz']);
  expect(second.body.nextCursor).toBeNull();
  // another tenant sees no such campaign
  const stranger = await createTenant(api, 'titles-stranger');
  expect((await call(api, 'GET', `/v1/campaigns/${campaignId}/chats`, stranger.token)).status).toBe(404);
});
