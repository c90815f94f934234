import { createDb } from '@metronome/db';
import { startService } from '@metronome/testkit';
import { api, createTenant, runsToEnd, startStack, type Stack } from '../helpers/stack.js';
import { eventually, REDIS_URL } from '../helpers/test-env.js';
import { linkedSessionBundle, startWireWhatsApp, type WireWhatsApp } from '../helpers/wire-whatsapp.js';
import { startWireServer } from '../helpers/wire-whatsapp-server.js';

// WhatsApp with the real Baileys in the senders and the API, against a WhatsApp Web server
// nobody here wrote (@openclaw/crabline, through WHATSAPP_WS_URL), judged by what that server
// decrypted. Three accounts are moved in by session import (the folder an operator's own
// Baileys script left, having written to two chats of each), two senders fan 50 direct chats
// per account out, and one sender is killed with SIGKILL mid-run. (Baileys opens a new Signal
// session to a chat in each new process even with its own file store: the script's sessions are
// not reused, by the library's choice; what must carry over is the device's identity.)

const ACCOUNTS = 3;
const CHATS = 50;
const GROUP_CONCURRENCY = 3;
// A request the killed sender wrote just before the kill may reach the server a little after
// the noted time (the signal's delivery, the socket's buffer): such a send was in flight.
const KILL_LANDS_MS = 250;

const chatOf = (a: number, i: number) => `1777${a}${String(i).padStart(6, '0')}@s.whatsapp.net`;
const textOf = (a: number) => `Hello from shop ${a}`;

let wire: WireWhatsApp;
let stack: Stack;
beforeAll(async () => {
  wire = await startWireWhatsApp();
  // behind Prism: the session import's requests and answers are held to the OpenAPI document
  stack = await startStack({ senders: 2, prism: true, env: { WHATSAPP_WS_URL: wire.url }, senderEnv: { SEND_TIMEOUT_MS: '5000', SENDER_HOLD_MS: '10000' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await wire?.close();
}, 60_000);

async function authRows(accountId: string): Promise<number> {
  const db = createDb({ url: stack.db.url, max: 1, applicationName: 'metronome-test' });
  try {
    const row = await db.selectFrom('whatsapp_auth').select(db.fn.countAll<string>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await db.destroy();
  }
}

test('three accounts imported by session send 50 chats each through two senders, one killed mid-run: each chat once, at the server', async () => {
  const token: string = (await createTenant(stack, 'wire-whatsapp')).body.token;
  const accounts: string[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const acc = await api(stack, 'POST', '/v1/accounts', token, {
      platform: 'whatsapp',
      name: `shop ${a}`,
      maxSendPerMinute: 600,
      groupConcurrency: GROUP_CONCURRENCY,
      sendDelaySeconds: null,
      typing: null,
    });
    expect(acc.status).toBe(201);
    accounts.push(acc.body.id);
  }

  // A malformed session is refused naming its field, and nothing is stored.
  const good = await linkedSessionBundle(wire.url, '601110000', [chatOf(0, 0), chatOf(0, 1)]);
  const creds = good.creds as Record<string, unknown>;
  const before = (await api(stack, 'GET', `/v1/accounts/${accounts[0]}`, token)).body.status;
  const malformed: [unknown, string][] = [
    [{ creds: { ...creds, noiseKey: undefined }, keys: good.keys }, 'creds.noiseKey'],
    [{ creds: { ...creds, noiseKey: { private: 'c2VjcmV0', public: 'c2VjcmV0' } }, keys: good.keys }, 'creds.noiseKey'],
    [{ creds: { ...creds, me: undefined }, keys: good.keys }, 'creds.me.id'],
    [{ creds, keys: { ...good.keys, 'not-a-key-1': {} } }, 'keys.not-a-key-1'],
  ];
  for (const [body, field] of malformed) {
    const r = await api(stack, 'POST', `/v1/accounts/${accounts[0]}/session`, token, body);
    expect({ status: r.status, fields: r.body.error?.details?.map((d: { field: string }) => d.field) }).toEqual({ status: 400, fields: [field] });
  }
  expect(await authRows(accounts[0]!)).toBe(0);
  expect((await api(stack, 'GET', `/v1/accounts/${accounts[0]}`, token)).body.status).toBe(before);

  const bundles = [good];
  for (let a = 0; a < ACCOUNTS; a++) {
    const bundle = a === 0 ? good : await linkedSessionBundle(wire.url, `60111000${a}`, [chatOf(a, 0), chatOf(a, 1)]);
    bundles[a] = bundle;
    const r = await api(stack, 'POST', `/v1/accounts/${accounts[a]}/session`, token, bundle);
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { status: 'active' } });
  }

  const runIds: string[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const c = await api(stack, 'POST', '/v1/campaigns', token, {
      accountId: accounts[a],
      name: `campaign ${a}`,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: textOf(a) }],
      targets: Array.from({ length: CHATS }, (_, i) => chatOf(a, i)),
      active: false,
    });
    expect(c.status).toBe(201);
    const run = await api(stack, 'POST', `/v1/campaigns/${c.body.id}/runs`, token);
    expect(run.status).toBe(201);
    runIds.push(run.body.id);
  }

  const campaignMessages = () => wire.accepted.filter((m) => m.text?.startsWith('Hello from shop'));
  await eventually('a third of the sends to reach the server', async () => campaignMessages().length >= (ACCOUNTS * CHATS) / 3, 60_000, 50);
  const killedAt = Date.now();
  await stack.senders[0]!.stop('SIGKILL');

  const runs = await runsToEnd(stack, token, runIds, 150_000, 1_000);
  const all = campaignMessages();
  let cutAtKill = 0;
  for (let a = 0; a < ACCOUNTS; a++) {
    const targets = (await api(stack, 'GET', `/v1/runs/${runIds[a]}/targets?limit=500`, token)).body.items as { chatId: string; status: string }[];
    expect(targets).toHaveLength(CHATS);
    for (const t of targets) {
      const got = all.filter((m) => m.to === t.chatId && m.text === textOf(a));
      // never twice, at the server
      expect({ chat: t.chatId, received: Math.min(got.length, 2) }).toEqual({ chat: t.chatId, received: Math.min(got.length, 1) });
      // crabline drops a message whose socket closed before it finished decrypting it: one the
      // killed sender wrote (and recorded sent) just before the kill. WhatsApp keeps what it
      // received; so does this judge: the message's frame reached the server by the kill.
      const cut = got.length === 0 && wire.encs.some((e) => e.to === t.chatId && e.at <= killedAt + KILL_LANDS_MS && !wire.accepted.some((m) => m.id === e.id));
      if (t.status === 'sent' && cut) cutAtKill++;
      else if (t.status === 'sent') expect({ chat: t.chatId, received: got.length }).toEqual({ chat: t.chatId, received: 1 });
      // unknown only where a request of the killed sender was in flight: received before the kill landed, or never
      else if (t.status === 'unknown') expect(got.every((m) => m.at <= killedAt + KILL_LANDS_MS)).toBe(true);
      else throw new Error(`chat ${t.chatId} of shop ${a} ended ${t.status}`);
    }
    const unknown = targets.filter((t) => t.status === 'unknown').length;
    expect(unknown).toBeLessThanOrEqual(GROUP_CONCURRENCY);
  }
  // in flight at the kill: at most one lane of each account the killed sender held
  expect(cutAtKill).toBeLessThanOrEqual(ACCOUNTS * GROUP_CONCURRENCY);
  expect(runs.every((r) => ['success', 'partial'].includes(r.status))).toBe(true);

  // libsignal prints each Signal session it replaces, private keys included, to the console: the
  // services route the console into their logs without the objects
  expect(stack.services.flatMap((s) => s.output).join('\n')).not.toMatch(/privKey|SessionEntry/);

  // Each account spoke as the device it imported: every Signal session it opened at the server
  // carries the identity key of the session's creds.json.
  for (let a = 0; a < ACCOUNTS; a++) {
    const identity = `05${Buffer.from((bundles[a]!.creds as { signedIdentityKey: { public: { data: string } } }).signedIdentityKey.public.data, 'base64').toString('hex')}`;
    const ids = new Set(all.filter((m) => m.text === textOf(a)).map((m) => m.id));
    const opened = wire.encs.filter((e) => ids.has(e.id) && e.type === 'pkmsg');
    expect(opened.length).toBeGreaterThan(0);
    expect(new Set(opened.map((e) => e.identityKey))).toEqual(new Set([identity]));
  }
}, 240_000);

test('a session the server refuses (the device was logged out on the phone) leaves the account disconnected, with the reason in the answer', async () => {
  const token: string = (await createTenant(stack, 'wire-whatsapp-refused')).body.token;
  const acc = await api(stack, 'POST', '/v1/accounts', token, { platform: 'whatsapp', name: 'refused' });
  const bundle = await linkedSessionBundle(wire.url, '601119999');
  // An API whose WhatsApp server answers every handshake as WhatsApp answers a logged-out device
  // (the project's own wire server: crabline accepts every device).
  const refusing = await startWireServer();
  refusing.failure = '401';
  const other = startService('api-refused', 'services/control-api/dist/server.js', {
    DATABASE_URL: stack.db.url,
    REDIS_URL,
    KEY_PREFIX: stack.keyPrefix,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_TOKEN: stack.adminToken,
    WHATSAPP_WS_URL: refusing.url,
  });
  try {
    const url = String((await other.waitForLog((l) => l['msg'] === 'control-api listening'))['url']);
    const r = await api({ apiUrl: url }, 'POST', `/v1/accounts/${acc.body.id}/session`, token, bundle);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'disconnected', reason: { code: 'logged_out', message: expect.any(String) } });
    expect((await api(stack, 'GET', `/v1/accounts/${acc.body.id}`, token)).body.status).toBe('disconnected');
    // the session is kept: an import of the phone's new device replaces it
    expect(await authRows(acc.body.id)).toBeGreaterThan(0);
  } finally {
    await other.stop();
    await refusing.close();
  }
}, 60_000);
