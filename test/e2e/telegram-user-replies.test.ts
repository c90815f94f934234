import { api, createTenant, runsToEnd, startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { WireTelegram } from '../helpers/wire-telegram.js';

// Always-connected telegram_user accounts read what people write to them (issue 53), with the REAL
// GramJS client in one sender process against the FAKE Telegram on the wire: the account holder
// keeps the account's connection open with no run, and a private "STOP" from a stranger (sent as
// `updates` with the user) lists the chat under its id and @username (lower case); after a run to two people,
// one of them (named `@username` by the campaign) writes back (sent as `updateShortMessage`,
// which names the user by id only) and the run counts the reply. Each within 5 s of the server
// sending it; `metronome_opt_outs_total` counts the STOP under platform="telegram_user".

let fake: WireTelegram;
let stack: Stack;

beforeAll(async () => {
  fake = new WireTelegram();
  await fake.start();
  const env = { TELEGRAM_API_ID: '1', TELEGRAM_API_HASH: 'wire', TELEGRAM_USER_DC: `2@${fake.dc().ip}`, TELEGRAM_USER_SERVER_KEY: fake.serverKeyPem };
  stack = await startStack({ senders: 1, env, senderEnv: { ACCOUNT_HOLD_EVERY_MS: '500', SEND_TIMEOUT_MS: '5000', CHAT_MAX_SEND_PER_MINUTE_TELEGRAM: '0' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await fake?.close();
}, 60_000);

const suppressions = async (token: string, accountId: string) =>
  ((await api(stack, 'GET', `/v1/accounts/${accountId}/suppressions`, token)).body.items as { chatId: string; reason: string }[])
    .filter((s) => s.reason === 'opt_out')
    .map((s) => s.chatId)
    .sort();

async function optOutsCounted(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${stack.senderMetricsPorts[0]}/metrics`)).text();
  return Number(/^metronome_opt_outs_total\{platform="telegram_user"[^}]*\} (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

/** The account's chat directory synced from its dialogs (the peers' access hashes and usernames kept). */
async function syncChats(token: string, accountId: string): Promise<void> {
  expect((await api(stack, 'POST', `/v1/accounts/${accountId}/chats/sync`, token)).status).toBe(202);
  await eventually(
    'the chat directory synced',
    async () => (await api(stack, 'GET', `/v1/accounts/${accountId}`, token)).body.directory?.status === 'ok',
    20_000,
    50,
  );
}

test('a telegram_user account held with no run reads a STOP and a reply written to it: the chat listed, the run target replied, each within 5 s of the server sending', async () => {
  const phone = '+447700300001';
  const userId = fake.addUser(phone);
  const friend = fake.addUser('+447700300002', { username: 'Friend_One', firstName: 'Fran' });
  const other = fake.addUser('+447700300003', { firstName: 'Otto' });
  const stranger = fake.addUser('+447700300004', { username: 'Stranger_Two', firstName: 'Sam' });
  fake.setDialogs(userId, [
    { kind: 'user', id: friend, firstName: 'Fran', username: 'Friend_One' },
    { kind: 'user', id: other, firstName: 'Otto' },
  ]);
  const token: string = (await createTenant(stack, 'tg-replies')).body.token;
  const acc = await api(stack, 'POST', '/v1/accounts', token, { platform: 'telegram_user', name: 'shop', typing: null });
  expect(acc.status).toBe(201);
  const accountId: string = acc.body.id;
  expect(acc.body.optOutKeywords).toEqual(['STOP', 'UNSUBSCRIBE']);
  expect((await api(stack, 'POST', `/v1/accounts/${accountId}/telegram-sign-in`, token, { phone })).status).toBe(200);
  const done = await api(stack, 'POST', `/v1/accounts/${accountId}/telegram-sign-in/code`, token, { code: fake.codeOf(phone) });
  expect(done.body).toMatchObject({ state: 'signed_in' });

  // between campaigns: no run, no sync; the sender's account holder opens the connection by itself
  await eventually('the account held connected', async () => fake.listening(userId), 20_000, 50);
  expect(await suppressions(token, accountId)).toEqual([]);
  let sentAt = Date.now();
  expect(fake.writeToAccount(stranger, userId, 'STOP')).toMatchObject({ form: 'updates', connectionId: expect.any(Number) });
  await eventually('the STOP listed', async () => (await suppressions(token, accountId)).length > 0, 5_000, 25);
  const stopMs = Date.now() - sentAt;
  expect(await suppressions(token, accountId)).toEqual([stranger, '@stranger_two'].sort());
  expect(await optOutsCounted()).toBe(1);

  // a run to two people (one named by its username in lower case, as the account keeps it; one by id), then nothing sends
  await syncChats(token, accountId);
  const c = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId,
    name: 'opening hours',
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: 'We open at nine' }],
    targets: ['@friend_one', other],
    active: false,
  });
  expect(c.status).toBe(201);
  const run = await api(stack, 'POST', `/v1/campaigns/${c.body.id}/runs`, token);
  expect(run.status).toBe(201);
  expect((await runsToEnd(stack, token, [run.body.id], 60_000, 100))[0]!.status).toBe('success');
  expect(
    fake
      .messagesOf(userId)
      .map((m) => m.chatId)
      .sort(),
  ).toEqual([friend, other].sort());

  const replied = async () =>
    Object.fromEntries(
      ((await api(stack, 'GET', `/v1/runs/${run.body.id}/targets`, token)).body.items as { chatId: string; repliedAt: string | null }[]).map((t) => [
        t.chatId,
        t.repliedAt !== null,
      ]),
    );
  expect(await replied()).toEqual({ '@friend_one': false, [other]: false });
  sentAt = Date.now();
  expect(fake.writeToAccount(friend, userId, 'Thanks, see you then')).toMatchObject({ form: 'short', connectionId: expect.any(Number) });
  await eventually('the reply counted on the run', async () => (await replied())['@friend_one'] === true, 5_000, 25);
  const replyMs = Date.now() - sentAt;
  expect(await replied()).toEqual({ '@friend_one': true, [other]: false });
  expect((await api(stack, 'GET', `/v1/runs/${run.body.id}`, token)).body.counts).toMatchObject({ replied: 1 });
  // a reply is not an opt-out
  expect(await optOutsCounted()).toBe(1);
  console.log(`STOP listed ${stopMs} ms, reply counted ${replyMs} ms after the server sent them`);
}, 120_000);

test('a campaign that typed @Friend_One counts the reply and takes the STOP of the user Telegram names friend_one; the next run to @FRIEND_ONE skips the chat', async () => {
  const phone = '+447700300011';
  const userId = fake.addUser(phone);
  const friend = fake.addUser('+447700300012', { username: 'friend_one', firstName: 'Fay' });
  const other = fake.addUser('+447700300013', { firstName: 'Oz' });
  fake.setDialogs(userId, [
    { kind: 'user', id: friend, firstName: 'Fay', username: 'friend_one' },
    { kind: 'user', id: other, firstName: 'Oz' },
  ]);
  const token: string = (await createTenant(stack, 'tg-usernames')).body.token;
  const accountId: string = (await api(stack, 'POST', '/v1/accounts', token, { platform: 'telegram_user', name: 'shop', typing: null })).body.id;
  expect((await api(stack, 'POST', `/v1/accounts/${accountId}/telegram-sign-in`, token, { phone })).status).toBe(200);
  await api(stack, 'POST', `/v1/accounts/${accountId}/telegram-sign-in/code`, token, { code: fake.codeOf(phone) });
  await eventually('the account held connected', async () => fake.listening(userId), 20_000, 50);
  // the username as the account keeps it (lower case), so '@Friend_One' is this friend whatever else the fake knows
  await syncChats(token, accountId);

  const runTo = async (targets: string[], status: string) => {
    const c = await api(stack, 'POST', '/v1/campaigns', token, {
      accountId,
      name: `to ${targets.join(' ')}`,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: 'We open at nine' }],
      targets,
      active: false,
    });
    const run = await api(stack, 'POST', `/v1/campaigns/${c.body.id}/runs`, token);
    expect((await runsToEnd(stack, token, [run.body.id], 60_000, 100))[0]!.status).toBe(status);
    return run.body.id as string;
  };
  const outcome = async (runId: string) =>
    Object.fromEntries(
      (
        (await api(stack, 'GET', `/v1/runs/${runId}/targets`, token)).body.items as {
          chatId: string;
          status: string;
          error: { code: string } | null;
          repliedAt: string | null;
        }[]
      ).map((t) => [t.chatId, `${t.status}${t.error ? ` ${t.error.code}` : ''}${t.repliedAt ? ' replied' : ''}`]),
    );
  const sentTo = () => fake.messagesOf(userId).map((m) => m.chatId);

  const first = await runTo(['@Friend_One', other], 'success');
  expect(sentTo().sort()).toEqual([friend, other].sort());
  fake.writeToAccount(friend, userId, 'Thanks, see you then');
  await eventually('the reply counted on @Friend_One', async () => (await outcome(first))['@Friend_One'] === 'sent replied', 5_000, 25);
  expect(await outcome(first)).toEqual({ '@Friend_One': 'sent replied', [other]: 'sent' });

  fake.writeToAccount(friend, userId, 'STOP');
  await eventually('the STOP listed', async () => (await suppressions(token, accountId)).length > 0, 5_000, 25);
  expect(await suppressions(token, accountId)).toEqual([friend, '@friend_one'].sort());
  const next = await runTo(['@FRIEND_ONE', other], 'partial');
  expect(await outcome(next)).toEqual({ '@FRIEND_ONE': 'skipped suppressed', [other]: 'sent' });
  expect(sentTo().sort()).toEqual([friend, other, other].sort());
}, 120_000);
