import { initAuthCreds } from '@whiskeysockets/baileys';
import { proxyOf } from '@metronome/transports';
import { baileysSocketFactory, proxyAgents } from '@metronome/transports/whatsapp';
import { gramjsClientFactory } from '@metronome/transports/telegram-user';
import { gramjsTestSession, startRecordingListener, startTestSocks5Proxy, TELEGRAM_DC2 } from '../helpers/test-socks5-proxy.js';
import { quietLogger } from './whatsapp-setup.js';

// A proxy per account carries the account's traffic (docs/platforms.md, "Proxy"): the real GramJS
// and the real Baileys socket, given an account's proxy, connect through a local SOCKS5 proxy (a
// test tool), whose log shows the platform's server as the destination. No platform server is
// reachable here: the proxy hands those connections to a local listener, which receives the bytes.

const PASSWORD = 'traffic-proxy-password-77c1';

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('telegram_user: GramJS connects to its data centre through the SOCKS5 proxy, with the login', async () => {
  const server = await startRecordingListener();
  const proxy = await startTestSocks5Proxy({ login: { user: 'acct', password: PASSWORD }, route: () => ({ host: '127.0.0.1', port: server.port }) });
  const client = gramjsClientFactory(await gramjsTestSession(), {
    apiId: 1,
    apiHash: 'x',
    proxy: proxyOf(`socks5://acct:${PASSWORD}@127.0.0.1:${proxy.port}`, 'telegram_user'),
  });
  try {
    void client.connect().catch(() => undefined);
    await until(() => server.bytes > 0, 'bytes at the data centre');
    // GramJS connects to the session's data centre on port 80 (TCP)
    expect(proxy.connections).toEqual([{ destination: `${TELEGRAM_DC2}:80`, carried: true, bytesUp: expect.any(Number), bytesDown: 0 }]);
    expect(proxy.connections[0]!.bytesUp).toBe(server.bytes);
    expect(proxy.refusedLogins).toBe(0);
  } finally {
    await client.disconnect().catch(() => undefined);
    await proxy.close();
    await server.close();
  }
});

test('telegram_user: an MTProxy is connected to directly, as GramJS speaks to one', async () => {
  const mtproxy = await startRecordingListener();
  const client = gramjsClientFactory(await gramjsTestSession(), {
    apiId: 1,
    apiHash: 'x',
    proxy: proxyOf(`mtproxy://0123456789abcdef0123456789abcdef@127.0.0.1:${mtproxy.port}`, 'telegram_user'),
  });
  try {
    void client.connect().catch(() => undefined);
    // the obfuscated transport's 64-byte header opens every MTProxy connection
    await until(() => mtproxy.bytes >= 64, 'the MTProxy header');
    expect(mtproxy.connections).toBe(1);
  } finally {
    await client.disconnect().catch(() => undefined);
    await mtproxy.close();
  }
});

test("whatsapp: Baileys' websocket goes to web.whatsapp.com through the SOCKS5 proxy (socks5h: the proxy resolves the name)", async () => {
  const server = await startRecordingListener();
  const proxy = await startTestSocks5Proxy({ login: { user: 'acct', password: PASSWORD }, route: () => ({ host: '127.0.0.1', port: server.port }) });
  const settings = proxyOf(`socks5h://acct:${PASSWORD}@127.0.0.1:${proxy.port}`, 'whatsapp');
  const keys = { get: async () => ({}), set: async () => undefined };
  const socket = baileysSocketFactory('a1', {
    auth: { creds: initAuthCreds(), keys } as never,
    cachedGroupMetadata: async () => undefined,
    getMessage: async () => undefined,
    logger: quietLogger as never,
    connectTimeoutMs: 5_000,
    defaultQueryTimeoutMs: 5_000,
    ...proxyAgents(settings),
  });
  try {
    // the TLS handshake towards WhatsApp's server starts inside the tunnel
    await until(() => server.bytes > 0, 'bytes at the server');
    expect(proxy.connections).toEqual([{ destination: 'web.whatsapp.com:443', carried: true, bytesUp: expect.any(Number), bytesDown: 0 }]);
    expect(proxy.refusedLogins).toBe(0);
  } finally {
    await Promise.resolve(socket.end(undefined)).catch(() => undefined);
    await proxy.close();
    await server.close();
  }
});
