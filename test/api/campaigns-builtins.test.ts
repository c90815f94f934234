import { randomUUID } from 'node:crypto';
import { ChatDirectoryRepository } from '@metronome/db';
import { apiForFile, call, campaignBody, createAccount, createTenant, tenantForFile } from './harness.js';

// Built-in variables ({{chat.title}}, {{chat.kind}}, {{chat.memberCount}}) at the API: checked
// at create, preview and PATCH against the campaign account's chat directory (the chat's own
// variables win), for targets and audience members alike; copied into each run's chats with
// their own variables (libs/core chatVariables), test sends included. Rendering is unit-tested in
// libs/core; what the platform receives, in test/console/whole-path.test.ts.

const api = apiForFile('api_campaigns_builtins');
const t = tenantForFile(api, 'builtins');
let accountId: string;
beforeAll(async () => {
  accountId = await createAccount(api, t);
  await new ChatDirectoryRepository(api.db).upsert(
    accountId,
    [
      { chatId: 'g-1', title: 'Café Central', kind: 'group', memberCount: 9, canSend: true, cannotSendReason: null },
      { chatId: 'd-1', title: null, kind: 'direct', memberCount: null, canSend: true, cannotSendReason: null },
    ],
    new Date(),
  );
});

const greeting = (text: string, extra: Record<string, unknown> = {}) => campaignBody(accountId, { messages: [{ type: 'text', text }], ...extra });
const runVars = async (runId: string) =>
  Object.fromEntries(
    (await api.db.selectFrom('run_targets').select(['chat_id', 'vars']).where('run_id', '=', runId).orderBy('chat_id').execute()).map((r) => [
      r.chat_id,
      r.vars,
    ]),
  );

test('a built-in the directory knows needs no value; one it lacks is a 400 naming the chat, with how to fix it', async () => {
  const known = await call(api, 'POST', '/v1/campaigns', t.token, greeting('Hi {{chat.title}} ({{chat.kind}}, {{chat.memberCount}})', { targets: ['g-1'] }));
  expect(known.status).toBe(201);
  // a chat without a title in the directory, and a chat the directory does not list
  const body = greeting('Hi {{chat.title}}', { targets: ['g-1', 'd-1', { chatId: 'zz', vars: { name: 'Zed' } }] });
  for (const route of ['/v1/campaigns', '/v1/campaigns/preview']) {
    const res = await call(api, 'POST', route, t.token, body);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      {
        field: 'targets.1.vars.chat.title',
        message:
          "messages.0.text uses {{chat.title}}, and chat “\u2068d-1\u2069” has no value for it: the chat directory does not know it: sync the account's chats, or give the tag a fallback ({{chat.title|…}})",
      },
    ]);
  }
  // with a fallback, or a variable the chat has of its own, it is accepted
  expect((await call(api, 'POST', '/v1/campaigns', t.token, greeting('Hi {{chat.title|there}}', { targets: ['d-1', 'zz'] }))).status).toBe(201);
  // a dotted name that is no built-in is refused as any bad name
  const bad = await call(api, 'POST', '/v1/campaigns', t.token, greeting('Hi {{chat.topic}}', { targets: ['g-1'] }));
  expect(bad.body.error.details).toEqual([{ field: 'messages.0.text', message: expect.stringContaining('chat.title, chat.kind, chat.memberCount') }]);
});

test('moving a campaign to another account judges its built-ins on that account’s directory', async () => {
  const created = await call(api, 'POST', '/v1/campaigns', t.token, greeting('Hi {{chat.title}}', { targets: ['g-1'] }));
  expect(created.status).toBe(201);
  const other = await createAccount(api, t);
  const moved = await call(api, 'PATCH', `/v1/campaigns/${created.body.id}`, t.token, { accountId: other });
  expect(moved.status).toBe(400);
  expect(moved.body.error.details.map((d: { field: string }) => d.field)).toEqual(['targets.0.vars.chat.title']);
});

test("audience members are judged on the campaign account's directory, never another tenant's", async () => {
  const audience = await call(api, 'POST', '/v1/audiences', t.token, {
    name: `a-${randomUUID().slice(0, 8)}`,
    members: [{ chatId: 'g-1' }, { chatId: 'stranger', vars: { name: 'S' } }],
  });
  expect(audience.status).toBe(201);
  const body = greeting('Hi {{chat.title}}', { targets: [], audienceIds: [audience.body.id] });
  const res = await call(api, 'POST', '/v1/campaigns', t.token, body);
  expect(res.status).toBe(400);
  expect(res.body.error.details).toEqual([
    { field: 'audienceIds.0', message: 'messages.0.text uses {{chat.title}}, and member "stranger" of this audience has no value for it' },
  ]);
  // another tenant's account listing the chat lends nothing (and is no account of this tenant)
  const other = await createTenant(api, 'builtins-other');
  const theirs = await createAccount(api, other);
  await new ChatDirectoryRepository(api.db).upsert(
    theirs,
    [{ chatId: 'stranger', title: 'Secret', kind: 'group', memberCount: 2, canSend: true, cannotSendReason: null }],
    new Date(),
  );
  const crossed = await call(api, 'POST', '/v1/campaigns', t.token, { ...body, accountId: theirs });
  expect(crossed.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'audienceIds.0' })]));
  expect(JSON.stringify(crossed.body)).not.toContain('Secret');
});

test("a run copies each chat's built-ins under its own variables; a run of a text without built-ins copies only its own", async () => {
  const audience = await call(api, 'POST', '/v1/audiences', t.token, {
    name: `a-${randomUUID().slice(0, 8)}`,
    members: [{ chatId: 'd-1', vars: { name: 'Dee' } }],
  });
  const targets = [{ chatId: 'g-1', vars: { name: 'Group' } }, 'zz'];
  const campaign = await call(
    api,
    'POST',
    '/v1/campaigns',
    t.token,
    greeting('Hi {{name|friends}} in {{chat.title|your chat}}', { targets, audienceIds: [audience.body.id] }),
  );
  expect(campaign.status).toBe(201);
  const run = await call(api, 'POST', `/v1/campaigns/${campaign.body.id}/runs`, t.token, {});
  expect(run.status).toBe(201);
  expect(await runVars(run.body.id)).toEqual({
    'd-1': { name: 'Dee', 'chat.kind': 'direct' },
    'g-1': { name: 'Group', 'chat.title': 'Café Central', 'chat.kind': 'group', 'chat.memberCount': '9' },
    zz: null,
  });
  // the test send: as a chat of the campaign, its variables over its built-ins; alone, the test chat's built-ins
  const asGroup = await call(api, 'POST', `/v1/campaigns/${campaign.body.id}/test-sends`, t.token, { chatId: 'my-phone', asChatId: 'g-1' });
  expect(asGroup.status).toBe(202);
  expect(await runVars(asGroup.body.id)).toEqual({
    'my-phone': { name: 'Group', 'chat.title': 'Café Central', 'chat.kind': 'group', 'chat.memberCount': '9' },
  });
  const toGroup = await call(api, 'POST', `/v1/campaigns/${campaign.body.id}/test-sends`, t.token, { chatId: 'g-1' });
  expect(await runVars(toGroup.body.id)).toEqual({ 'g-1': { 'chat.title': 'Café Central', 'chat.kind': 'group', 'chat.memberCount': '9' } });

  const plain = await call(api, 'POST', '/v1/campaigns', t.token, greeting('Hi {{name|friends}}', { targets, audienceIds: [audience.body.id] }));
  const second = await call(api, 'POST', `/v1/campaigns/${plain.body.id}/runs`, t.token, {});
  expect(second.status).toBe(201);
  expect(await runVars(second.body.id)).toEqual({ 'd-1': { name: 'Dee' }, 'g-1': { name: 'Group' }, zz: null });
});
