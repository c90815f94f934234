import { api, createHttpAccount, createTenant, sharedStackForFile, type SandboxMessage } from '../helpers/stack.js';
import { received } from '../helpers/platform-record.js';
import { eventually } from '../helpers/test-env.js';

// Audiences and test sends end to end, judged at the sandbox's record: a run sends to the
// audience as it was when the run was created, however the audience is edited meanwhile, and
// the next run to the list as it is then; a test send reaches its one chat with the chosen
// chat's variables and holds no chat of the campaign's next run back. On the run's shared
// stack, behind a Prism proxy of its own: its accounts' records only.

const stack = sharedStackForFile({ prism: true });

const textsByChat = (items: SandboxMessage[], account: string) =>
  Object.fromEntries(items.filter((m) => m.account === account).map((m) => [m.chatId, m.part.text]));

async function runEnded(token: string, runId: string) {
  return eventually(
    'the run to finish',
    async () => {
      const run = await api(stack, 'GET', `/v1/runs/${runId}`, token);
      return ['success', 'partial', 'failed', 'cancelled'].includes(run.body.status) ? run.body : null;
    },
    90_000,
    250,
  );
}

test('an audience edited while its run is running changes nothing in that run; the next run sends to the new members', async () => {
  const token = (await createTenant(stack, 'snapshot')).body.token;
  const ACCOUNT = 'aud-snapshot';
  // 40 sends a minute: the run of four chats is still sending (~4.5 s) while the audience is edited
  const account = await createHttpAccount(stack, token, { name: 'snapshot', externalId: ACCOUNT, maxSendPerMinute: 40 });
  expect(account.status).toBe(201);
  const audience = await api(stack, 'POST', '/v1/audiences', token, {
    name: 'club',
    members: ['m1', 'm2', 'm3', 'm4'].map((chatId) => ({ chatId, vars: { name: `${chatId} first` } })),
  });
  expect(audience.status).toBe(201);
  const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId: account.body.id,
    name: 'club news',
    timezone: 'UTC',
    // the next occurrence 8 s on: after the edit, and after this run's last send (~4.5 s)
    schedule: { type: 'interval', everySeconds: 8 },
    messages: [{ type: 'text', text: 'Hi {{name}}' }],
    targets: [{ chatId: 'm2', vars: { name: 'm2 inline' } }],
    audienceIds: [audience.body.id],
  });
  expect(campaign.status).toBe(201);
  const runs = async () => (await api(stack, 'GET', `/v1/runs?campaignId=${campaign.body.id}`, token)).body.items as { id: string; status: string }[];
  const first = await eventually('the first run sending', async () => {
    const [run] = await runs();
    return run && (await received(stack, ACCOUNT)).length > 0 ? run : null;
  });

  const id = audience.body.id;
  expect((await api(stack, 'DELETE', `/v1/audiences/${id}/members`, token, { chatIds: ['m4'] })).body).toEqual({ removed: 1 });
  expect(
    (
      await api(stack, 'POST', `/v1/audiences/${id}/members`, token, {
        members: [
          { chatId: 'm5', vars: { name: 'm5 new' } },
          { chatId: 'm1', vars: { name: 'm1 renamed' } },
        ],
      })
    ).body,
  ).toEqual({
    added: 1,
    updated: 1,
  });
  const during = await api(stack, 'GET', `/v1/runs/${first.id}`, token);
  // the edit really came while the run still had chats to send
  expect(during.body.counts.pending + during.body.counts.inFlight).toBeGreaterThan(0);

  const firstEnd = await runEnded(token, first.id);
  expect(firstEnd).toMatchObject({ status: 'success', counts: { total: 4, sent: 4 } });
  const firstRecord = await received(stack, ACCOUNT);
  expect(textsByChat(firstRecord, ACCOUNT)).toEqual({ m1: 'Hi m1 first', m2: 'Hi m2 inline', m3: 'Hi m3 first', m4: 'Hi m4 first' });

  const second = await eventually('the next run', async () => (await runs()).find((r) => r.id !== first.id) ?? null, 90_000, 500);
  const secondEnd = await runEnded(token, second.id);
  expect(secondEnd).toMatchObject({ status: 'success', counts: { total: 4, sent: 4 } });
  const secondRecord = (await received(stack, ACCOUNT)).slice(firstRecord.length);
  expect(textsByChat(secondRecord, ACCOUNT)).toEqual({ m1: 'Hi m1 renamed', m2: 'Hi m2 inline', m3: 'Hi m3 first', m5: 'Hi m5 new' });
}, 180_000);

test("a test send reaches its one chat with the chosen chat's variables; the campaign's next run is not held for that chat", async () => {
  const token = (await createTenant(stack, 'tests')).body.token;
  const ACCOUNT = 'aud-tests';
  const account = await createHttpAccount(stack, token, { name: 'tests', externalId: ACCOUNT, maxSendPerMinute: 6000 });
  expect(account.status).toBe(201);
  const members = await api(stack, 'POST', '/v1/audiences', token, { name: 'vip', members: [{ chatId: 'vip-1', vars: { name: 'Vera' } }] });
  const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId: account.body.id,
    name: 'to test first',
    timezone: 'UTC',
    // an hour: a chat the gate held would not be sent within this test
    schedule: { type: 'interval', everySeconds: 3600 },
    messages: [{ type: 'text', text: 'Hello {{name}}' }],
    targets: [
      { chatId: 'ops-phone', vars: { name: 'Ops' } },
      { chatId: 'yan', vars: { name: 'Yan' } },
    ],
    audienceIds: [members.body.id],
    active: false,
  });
  expect(campaign.status).toBe(201);

  const asMember = await api(stack, 'POST', `/v1/campaigns/${campaign.body.id}/test-sends`, token, { chatId: 'ops-phone', asChatId: 'vip-1' });
  expect(asMember.status).toBe(202);
  expect(asMember.body.trigger).toBe('test');
  expect(await runEnded(token, asMember.body.id)).toMatchObject({ status: 'success', counts: { total: 1, sent: 1 } });
  const plain = await api(stack, 'POST', `/v1/campaigns/${campaign.body.id}/test-sends`, token, { chatId: 'ops-phone' });
  expect(await runEnded(token, plain.body.id)).toMatchObject({ status: 'success' });
  const tests = await received(stack, ACCOUNT);
  expect(tests.map((m) => [m.chatId, m.part.text])).toEqual([
    ['ops-phone', 'Hello Vera'],
    ['ops-phone', 'Hello {{name}}'],
  ]);

  // going live: the first scheduled run reaches every chat, ops-phone included, at once
  expect((await api(stack, 'PATCH', `/v1/campaigns/${campaign.body.id}`, token, { active: true })).status).toBe(200);
  const run = await eventually('the scheduled run', async () => {
    const list = (await api(stack, 'GET', `/v1/runs?campaignId=${campaign.body.id}`, token)).body.items as { id: string; trigger: string }[];
    return list.find((r) => r.trigger !== 'test') ?? null;
  });
  expect(await runEnded(token, run.id)).toMatchObject({ status: 'success', counts: { total: 3, sent: 3 } });
  const live = (await received(stack, ACCOUNT)).slice(tests.length);
  expect(textsByChat(live, ACCOUNT)).toEqual({ 'ops-phone': 'Hello Ops', yan: 'Hello Yan', 'vip-1': 'Hello Vera' });
  expect((await api(stack, 'GET', `/v1/campaigns/${campaign.body.id}`, token)).body.lastRunId).toBe(run.id);

  // a suppressed chat is skipped in a test as in any run
  expect((await api(stack, 'POST', `/v1/accounts/${account.body.id}/suppressions`, token, { chatIds: ['blocked-phone'] })).status).toBe(200);
  const suppressed = await api(stack, 'POST', `/v1/campaigns/${campaign.body.id}/test-sends`, token, { chatId: 'blocked-phone', asChatId: 'yan' });
  expect(suppressed.status).toBe(202);
  expect((await runEnded(token, suppressed.body.id)).counts).toMatchObject({ total: 1, skipped: 1, sent: 0 });
  const target = (await api(stack, 'GET', `/v1/runs/${suppressed.body.id}/targets`, token)).body.items[0];
  expect(target).toMatchObject({ chatId: 'blocked-phone', status: 'skipped', error: { code: 'suppressed' } });
  expect((await received(stack, ACCOUNT)).filter((m) => m.chatId === 'blocked-phone')).toEqual([]);
}, 120_000);
