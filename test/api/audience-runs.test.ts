import { randomUUID } from 'node:crypto';
import { call, campaignBody, createAccount, createTenant, fields, seedRun, startApi, type Api, type Tenant } from './harness.js';

// What a run takes from a campaign's audiences (the snapshot: targets ∪ members, inline vars
// first, total counted, later edits never reaching it), and the test send's run: one chat,
// the chosen chat's vars, outside the one-open-run rule and the interval gate. The sending
// itself is judged at the sandbox in test/e2e/audiences.test.ts.

let api: Api;
let mine: Tenant;
let theirs: Tenant;
beforeAll(async () => {
  api = await startApi('api_audience_runs');
  mine = await createTenant(api, 'mine');
  theirs = await createTenant(api, 'theirs');
}, 30_000);
afterAll(async () => api.close());

async function audience(members: unknown[]): Promise<string> {
  const res = await call(api, 'POST', '/v1/audiences', mine.token, { name: `a-${randomUUID().slice(0, 8)}`, members });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function targetsOf(runId: string): Promise<Record<string, Record<string, string> | null>> {
  const rows = await api.db.selectFrom('run_targets').select(['chat_id', 'vars']).where('run_id', '=', runId).orderBy('chat_id').execute();
  return Object.fromEntries(rows.map((r) => [r.chat_id, r.vars as Record<string, string> | null]));
}

async function newCampaign(extra: Record<string, unknown>): Promise<string> {
  const accountId = await createAccount(api, mine);
  const res = await call(api, 'POST', '/v1/campaigns', mine.token, campaignBody(accountId, { messages: [{ type: 'text', text: 'Hi {{name}}' }], ...extra }));
  expect(res.status).toBe(201);
  return res.body.id;
}

test('a run takes the inline targets and the members of every audience, each chat once, as they are when it is created', async () => {
  const first = await audience([
    { chatId: 'a', vars: { name: 'A from first' } },
    { chatId: 'both', vars: { name: 'Both from first' } },
    { chatId: 'inline', vars: { name: 'Inline from audience' } },
  ]);
  const second = await audience([
    { chatId: 'both', vars: { name: 'Both from second' } },
    { chatId: 'b', vars: { name: 'B' } },
  ]);
  const campaignId = await newCampaign({
    targets: [
      { chatId: 'inline', vars: { name: 'Inline' } },
      { chatId: 't', vars: { name: 'T' } },
    ],
    audienceIds: [first, second],
  });

  const run = await call(api, 'POST', `/v1/campaigns/${campaignId}/runs`, mine.token, {});
  expect(run.status).toBe(201);
  expect(run.body.counts.total).toBe(5);
  const snapshot = {
    a: { name: 'A from first' },
    b: { name: 'B' },
    both: { name: 'Both from first' },
    inline: { name: 'Inline' },
    t: { name: 'T' },
  };
  expect(await targetsOf(run.body.id)).toEqual(snapshot);

  // The audiences change while the run is open: the run does not.
  await call(api, 'POST', `/v1/audiences/${first}/members`, mine.token, {
    members: [
      { chatId: 'a', vars: { name: 'A again' } },
      { chatId: 'new', vars: { name: 'New' } },
    ],
  });
  await call(api, 'DELETE', `/v1/audiences/${second}/members`, mine.token, { chatIds: ['b'] });
  expect(await targetsOf(run.body.id)).toEqual(snapshot);
  expect((await call(api, 'GET', `/v1/runs/${run.body.id}`, mine.token)).body.counts.total).toBe(5);

  // The next run sends to the lists as they are then.
  expect((await call(api, 'POST', `/v1/runs/${run.body.id}/cancel`, mine.token)).status).toBe(202);
  api.clock.advance(1_000); // one run per (campaign, scheduledAt)
  const next = await call(api, 'POST', `/v1/campaigns/${campaignId}/runs`, mine.token, {});
  expect(next.status).toBe(201);
  expect(await targetsOf(next.body.id)).toEqual({
    a: { name: 'A again' },
    both: { name: 'Both from first' },
    inline: { name: 'Inline' },
    new: { name: 'New' },
    t: { name: 'T' },
  });
  expect(next.body.counts.total).toBe(5);
});

test('a campaign of audiences only: an empty audience makes a run of no chats', async () => {
  const empty = await audience([]);
  const campaignId = await newCampaign({ messages: [{ type: 'text', text: 'Hi' }], targets: [], audienceIds: [empty] });
  const run = await call(api, 'POST', `/v1/campaigns/${campaignId}/runs`, mine.token, {});
  expect(run.status).toBe(201);
  expect(run.body.counts.total).toBe(0);
});

test("a test send: one chat, rendered with the chosen chat's vars, outside the one-open-run rule", async () => {
  const members = await audience([{ chatId: 'member', vars: { name: 'Member' } }]);
  const campaignId = await newCampaign({ targets: [{ chatId: 'inline', vars: { name: 'Inline' } }], audienceIds: [members], active: false });

  const asInline = await call(api, 'POST', `/v1/campaigns/${campaignId}/test-sends`, mine.token, { chatId: 'my-phone', asChatId: 'inline' });
  expect(asInline.status).toBe(202);
  expect(asInline.body).toMatchObject({ campaignId, trigger: 'test', status: 'queued', counts: { total: 1, pending: 1 }, windowEndAt: null });
  expect(await targetsOf(asInline.body.id)).toEqual({ 'my-phone': { name: 'Inline' } });
  const row = await api.db.selectFrom('runs').select(['ignored_interval']).where('id', '=', asInline.body.id).executeTakeFirstOrThrow();
  expect(row.ignored_interval).toBe(true);

  // a second test while the first is queued, and a member's vars
  const asMember = await call(api, 'POST', `/v1/campaigns/${campaignId}/test-sends`, mine.token, { chatId: 'my-phone', asChatId: 'member' });
  expect(asMember.status).toBe(202);
  expect(await targetsOf(asMember.body.id)).toEqual({ 'my-phone': { name: 'Member' } });
  const plain = await call(api, 'POST', `/v1/campaigns/${campaignId}/test-sends`, mine.token, { chatId: 'my-phone' });
  expect(await targetsOf(plain.body.id)).toEqual({ 'my-phone': null });

  // open test runs do not hold back run now, and an open run does not hold back a test
  const runNow = await call(api, 'POST', `/v1/campaigns/${campaignId}/runs`, mine.token, {});
  expect(runNow.status).toBe(201);
  expect((await call(api, 'POST', `/v1/campaigns/${campaignId}/runs`, mine.token, {})).status).toBe(409);
  expect((await call(api, 'POST', `/v1/campaigns/${campaignId}/test-sends`, mine.token, { chatId: 'my-phone' })).status).toBe(202);

  // listed with the campaign's runs, but not its lastRunId; the schedule did not move
  const listed = await call(api, 'GET', `/v1/runs?campaignId=${campaignId}`, mine.token);
  expect(listed.body.items.filter((r: { trigger: string }) => r.trigger === 'test')).toHaveLength(4);
  const campaign = await call(api, 'GET', `/v1/campaigns/${campaignId}`, mine.token);
  expect(campaign.body).toMatchObject({ lastRunId: runNow.body.id, nextRunAt: null, active: false });

  // bad input
  expect(fields(await call(api, 'POST', `/v1/campaigns/${campaignId}/test-sends`, mine.token, { chatId: 'x', asChatId: 'stranger' }))).toEqual(['asChatId']);
  expect(fields(await call(api, 'POST', `/v1/campaigns/${campaignId}/test-sends`, mine.token, { chatId: '' }))).toEqual(['chatId']);
  expect(fields(await call(api, 'POST', `/v1/campaigns/${campaignId}/test-sends`, mine.token, {}))).toEqual(['chatId']);
  const foreign = await call(api, 'POST', `/v1/campaigns/${campaignId}/test-sends`, theirs.token, { chatId: 'x' });
  expect(foreign.status).toBe(404);
});

test('a test run is no delivery for the interval gate: a scheduled run after it is not held for that chat', async () => {
  const campaignId = await newCampaign({
    messages: [{ type: 'text', text: 'Hi' }],
    targets: ['gated', 'other'],
    schedule: { type: 'interval', everySeconds: 3600 },
    active: false,
  });
  const test = await call(api, 'POST', `/v1/campaigns/${campaignId}/test-sends`, mine.token, { chatId: 'gated' });
  // as the sender would leave it: sent a minute ago
  await api.db
    .updateTable('run_targets')
    .set({ status: 'sent', sent_at: new Date(api.clock.now() - 60_000), attempts: 1 })
    .where('run_id', '=', test.body.id)
    .execute();
  await api.db
    .updateTable('runs')
    .set({ status: 'success', finished_at: new Date(api.clock.now() - 60_000) })
    .where('id', '=', test.body.id)
    .execute();
  // ...and a scheduled run of the campaign that reached `other` a minute ago does hold it
  await seedRun(api, campaignId, 'success', { other: 'sent' }, { scheduledAt: new Date(api.clock.now() - 120_000) });
  await api.db
    .updateTable('run_targets')
    .set({ sent_at: new Date(api.clock.now() - 60_000) })
    .where('chat_id', '=', 'other')
    .execute();
  await api.db
    .updateTable('runs')
    .set({ finished_at: new Date(api.clock.now() - 60_000) })
    .where('campaign_id', '=', campaignId)
    .where('trigger', '=', 'schedule')
    .execute();

  const run = await call(api, 'POST', `/v1/campaigns/${campaignId}/runs`, mine.token, {});
  expect(run.status).toBe(201);
  const due = await api.db.selectFrom('run_targets').select(['chat_id', 'next_attempt_at']).where('run_id', '=', run.body.id).orderBy('chat_id').execute();
  const at = Object.fromEntries(due.map((t) => [t.chat_id, t.next_attempt_at.getTime()]));
  expect(at['gated']).toBe(0);
  expect(at['other']).toBe(api.clock.now() - 60_000 + 3_600_000);
});
