import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { jest } from '@jest/globals';
import { seal } from '@metronome/core';
import { AccountRepository, accountProxies, WhatsAppAuthRepository } from '@metronome/db';
import { loadScripts, redisKeys, SocketLeases } from '@metronome/redis';
import { proxyOf } from '@metronome/transports';
import { baileysSocketFactory, WhatsAppTransport } from '@metronome/transports/whatsapp';
import { gramjsClientFactory, TelegramUserTransport, UserClientPool } from '@metronome/transports/telegram-user';
import { makePool, quietLogger, seedPairedAuth, socketLeases } from '../platforms/whatsapp-setup.js';
import { closedPort, gramjsTestSession, startTestSocks5Proxy } from '../helpers/test-socks5-proxy.js';
import { apiForFile, BOT, call, campaignBody, fields, SANDBOX_KEY as KEY, seedRun, tenantForFile } from './harness.js';

// A proxy per account (CONTRACT §3, accounts; docs/platforms.md "Proxy"): whatsapp and
// telegram_user only, checked with a 400 naming `proxy`, sealed, shown as scheme/host/port and
// never with its login; a proxy that refuses shows on the account after one connection attempt.

const api = apiForFile('api_accounts_proxy');
const a = tenantForFile(api, 'A');
const PASSWORD = 'proxy-password-never-shown-9f3a';
const URL = `socks5://metronome:${PASSWORD}@10.0.0.9:1080`;

const post = (body: Record<string, unknown>) => call(api, 'POST', '/v1/accounts', a.token, { name: 'x', ...body });
const patch = (id: string, body: Record<string, unknown>) => call(api, 'PATCH', `/v1/accounts/${id}`, a.token, body);

test('whatsapp and telegram_user take a proxy on POST and PATCH; it is shown without its login and sealed in the database; null removes it', async () => {
  const wa = await post({ platform: 'whatsapp', proxy: URL });
  expect(wa.status).toBe(201);
  expect(wa.body.proxy).toEqual({ scheme: 'socks5', host: '10.0.0.9', port: 1080, authenticated: true, failure: null });
  const tg = await post({ platform: 'telegram_user', proxy: 'mtproxy://dd0123456789abcdef0123456789abcdef@mt.example.net:443' });
  expect(tg.body.proxy).toEqual({ scheme: 'mtproxy', host: 'mt.example.net', port: 443, authenticated: true, failure: null });
  const changed = await patch(tg.body.id, { proxy: 'socks5h://proxy.example.net:1081' });
  expect(changed.body.proxy).toEqual({ scheme: 'socks5h', host: 'proxy.example.net', port: 1081, authenticated: false, failure: null });

  const row = await api.db.selectFrom('accounts').select(['proxy']).where('id', '=', wa.body.id).executeTakeFirstOrThrow();
  expect(row.proxy!.toString('latin1')).not.toContain(PASSWORD);
  const everything = JSON.stringify([
    wa.body,
    (await call(api, 'GET', `/v1/accounts/${wa.body.id}`, a.token)).body,
    (await call(api, 'GET', '/v1/accounts', a.token)).body,
  ]);
  expect(everything).not.toContain(PASSWORD);
  expect(everything).not.toContain('metronome:');

  expect((await patch(wa.body.id, { proxy: null })).body.proxy).toBeNull();
  expect((await call(api, 'GET', `/v1/accounts/${wa.body.id}`, a.token)).body.proxy).toBeNull();
  expect((await api.db.selectFrom('accounts').select('proxy').where('id', '=', wa.body.id).executeTakeFirstOrThrow()).proxy).toBeNull();
});

test('a proxy a platform cannot use, or a malformed one, is a 400 naming proxy that never quotes the URL', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ platform: 'http', credentials: KEY, externalId: `p-${randomUUID().slice(0, 8)}`, proxy: URL }, 'a http account connects through no proxy'],
    [{ platform: 'telegram', credentials: BOT, proxy: URL }, 'a telegram account connects through no proxy'],
    [{ platform: 'whatsapp', proxy: 'mtproxy://0123456789abcdef0123456789abcdef@h:443' }, 'expected one of socks5://, socks5h:// for a whatsapp account'],
    [{ platform: 'whatsapp', proxy: `http://metronome:${PASSWORD}@h:8080` }, 'expected one of'],
    [{ platform: 'whatsapp', proxy: `socks5://metronome:${PASSWORD}@h` }, 'expected a port'],
    [{ platform: 'whatsapp', proxy: `socks5://metronome@h:1080` }, 'both a user and a password'],
    [{ platform: 'telegram_user', proxy: 'mtproxy://not-hex@h:443' }, 'the secret 32 hex digits'],
    [{ platform: 'telegram_user', proxy: `not a url ${PASSWORD}` }, 'expected a URL'],
  ];
  for (const [body, words] of cases) {
    const res = await post(body);
    expect([res.status, fields(res)]).toEqual([400, ['proxy']]);
    expect(JSON.stringify(res.body)).toContain(words);
    expect(JSON.stringify(res.body)).not.toContain(PASSWORD);
  }
  const bot = await post({ platform: 'telegram', credentials: BOT });
  const refused = await patch(bot.body.id, { proxy: URL });
  expect([refused.status, fields(refused)]).toEqual([400, ['proxy']]);
  expect((await patch(bot.body.id, { proxy: null })).status).toBe(200);
});

test('a proxy that refuses (closed port, wrong password) shows on the account after one connection attempt; a new proxy clears it', async () => {
  const closed = await closedPort();
  const guarded = await startTestSocks5Proxy({ login: { user: 'metronome', password: PASSWORD } });
  // everything this process prints meanwhile (GramJS prints its connection errors itself)
  const printed: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  const spies = [
    jest
      .spyOn(console, 'error')
      .mockImplementation((...args: unknown[]) => void printed.push(args.map((x) => (typeof x === 'string' ? x : inspect(x))).join(' '))),
    jest
      .spyOn(console, 'log')
      .mockImplementation((...args: unknown[]) => void printed.push(args.map((x) => (typeof x === 'string' ? x : inspect(x))).join(' '))),
    jest
      .spyOn(process.stderr, 'write')
      .mockImplementation(((chunk: unknown, ...rest: unknown[]) => (printed.push(String(chunk)), write(chunk as never, ...(rest as [])))) as never),
  ];
  try {
    const created = await post({ platform: 'telegram_user', proxy: `socks5://metronome:${PASSWORD}@127.0.0.1:${closed}` });
    const id: string = created.body.id;
    const key = api.config.secretsKey;
    await api.db
      .updateTable('accounts')
      .set({ credentials: seal(JSON.stringify({ session: 'not-used' }), key), status: 'active' }) // as a finished sign-in leaves it
      .where('id', '=', id)
      .execute();
    const proxies = accountProxies(new AccountRepository(api.db), [key], () => new Date(api.clock.now()));
    const leases = new SocketLeases(loadScripts(api.redis), redisKeys(api.prefix), 2_000);
    // GramJS itself, through the proxy: no fake of the network
    const pool = new UserClientPool({
      makeClient: gramjsClientFactory,
      apiId: 1,
      apiHash: 'x',
      lease: leases,
      holderId: 'test',
      reportProxy: proxies.reportProxy,
    });
    const transport = new TelegramUserTransport({ pool });
    const session = await gramjsTestSession();
    const send = async () => {
      const proxy = await proxies.proxyOf(id);
      const account = { id, externalId: null, credentials: { session }, proxy };
      return transport.send(account, { chatId: '-1001', idempotencyKey: randomUUID(), part: { type: 'text', text: 'hi' } } as never);
    };

    expect(await send()).toEqual({ kind: 'account-wait', code: 'proxy_failed', retryAfterMs: 30_000 });
    const shown = (await call(api, 'GET', `/v1/accounts/${id}`, a.token)).body;
    expect(shown.proxy.failure.message).toBe(`socks5://127.0.0.1:${closed} refused the connection (ECONNREFUSED)`);
    // a run of the account waits, and says why
    const campaign = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(id));
    const run = await seedRun(api, campaign.body.id, 'running', { '-1001': 'pending' });
    const waiting = (await call(api, 'GET', `/v1/runs/${run.id}`, a.token)).body.waiting;
    expect(waiting.reason).toBe('proxy_failed');
    expect(waiting.detail).toContain(`The account's proxy failed: socks5://127.0.0.1:${closed} refused the connection (ECONNREFUSED).`);

    // a wrong password: the proxy answers, and refuses the login
    const wrong = await patch(id, { proxy: `socks5://metronome:not-the-${PASSWORD}@127.0.0.1:${guarded.port}` });
    expect(wrong.body.proxy.failure).toBeNull();
    expect(await send()).toMatchObject({ kind: 'account-wait', code: 'proxy_failed' });
    expect(guarded.refusedLogins).toBeGreaterThan(0);
    const after = (await call(api, 'GET', `/v1/accounts/${id}`, a.token)).body;
    expect(after.proxy.failure.message).toBe(`socks5://127.0.0.1:${guarded.port} refused the login (SOCKS5 authentication failed)`);
    expect(JSON.stringify(after)).not.toContain(PASSWORD);
    await transport.close();
    expect(printed.join('\n')).not.toContain(PASSWORD);
  } finally {
    for (const spy of spies) spy.mockRestore();
    await guarded.close();
  }
}, 60_000);

test('whatsapp: Baileys through a proxy that refuses is proxy_failed on the send and on the account, after one connection attempt', async () => {
  const closed = await closedPort();
  const created = await post({ platform: 'whatsapp', proxy: `socks5h://metronome:${PASSWORD}@127.0.0.1:${closed}` });
  const id: string = created.body.id;
  const key = api.config.secretsKey;
  const auth = new WhatsAppAuthRepository(api.db);
  const clock = { now: () => api.clock.now() };
  await seedPairedAuth(auth, id, [key], clock);
  const proxies = accountProxies(new AccountRepository(api.db), [key], () => new Date(api.clock.now()));
  // Baileys itself (makeWASocket), its websocket through the account's SOCKS agent
  const pool = makePool({ factory: baileysSocketFactory } as never, socketLeases(api.redis, api.prefix), auth, [key], clock, proxies);
  const transport = new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: 5_000 });
  try {
    const proxy = await proxies.proxyOf(id);
    const result = await transport.send({ id, externalId: null, credentials: null, proxy }, {
      chatId: '60123456789',
      idempotencyKey: randomUUID(),
      part: { type: 'text', text: 'hi' },
    } as never);
    expect(result).toEqual({ kind: 'account-wait', code: 'proxy_failed', retryAfterMs: 30_000 });
    const shown = (await call(api, 'GET', `/v1/accounts/${id}`, a.token)).body;
    expect(shown.proxy.failure.message).toBe(`socks5h://127.0.0.1:${closed} refused the connection (ECONNREFUSED)`);
    expect(JSON.stringify(shown)).not.toContain(PASSWORD);
  } finally {
    await transport.close();
  }
}, 60_000);

test('a connection that opens through the proxy clears its failure on the account', async () => {
  const created = await post({ platform: 'telegram_user', proxy: `socks5://metronome:${PASSWORD}@10.0.0.9:1080` });
  const id: string = created.body.id;
  await api.db
    .updateTable('accounts')
    .set({ proxy_failure: 'socks5://10.0.0.9:1080 did not answer in time', proxy_failed_at: new Date() })
    .where('id', '=', id)
    .execute();
  expect((await call(api, 'GET', `/v1/accounts/${id}`, a.token)).body.proxy.failure).not.toBeNull();
  const proxies = accountProxies(new AccountRepository(api.db), [api.config.secretsKey], () => new Date(api.clock.now()));
  // a client whose connection opens (what GramJS does once the proxy carries it)
  const opened = { connect: async () => undefined, disconnect: async () => undefined } as never;
  const pool = new UserClientPool({
    makeClient: () => opened,
    apiId: 1,
    apiHash: 'x',
    lease: new SocketLeases(loadScripts(api.redis), redisKeys(api.prefix), 2_000),
    holderId: 'test-open',
    reportProxy: proxies.reportProxy,
  });
  const url = (await proxies.proxyOf(id))!;
  await pool.client(id, 'session', { url, settings: proxyOf(url, 'telegram_user')! });
  expect((await call(api, 'GET', `/v1/accounts/${id}`, a.token)).body.proxy).toEqual({
    scheme: 'socks5',
    host: '10.0.0.9',
    port: 1080,
    authenticated: true,
    failure: null,
  });
  await pool.close();
});
