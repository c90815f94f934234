import { startTestSocks5Proxy, type TestSocks5Proxy } from '../helpers/test-socks5-proxy.js';
import { startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { wirePoolForFile } from './wire-setup.js';

// An account's proxy with WHATSAPP_WS_URL set: the real Baileys socket reaches the wire-level
// server (a FAKE WhatsApp Web of this project's own) through a local SOCKS5 proxy (a test tool),
// and when a connection through the proxy fails, the proxy is probed with that same server —
// not web.whatsapp.com, which this deployment never connects to.

let server: WireServer;
let proxy: TestSocks5Proxy;
/** where the proxy sends what it is asked for: the wire server, or a closed port */
let reachable = true;
const reports: (string | null)[] = [];
beforeAll(async () => {
  server = await startWireServer();
  const port = Number(new URL(server.url).port);
  proxy = await startTestSocks5Proxy({ route: () => ({ host: '127.0.0.1', port: reachable ? port : 1 }) });
});
afterAll(async () => {
  await proxy?.close();
  await server?.close();
});
const wire = wirePoolForFile('proxy_wire', () => ({
  url: server.url,
  proxyOf: async () => `socks5://127.0.0.1:${proxy.port}`,
  reportProxy: async (_accountId, _p, failure) => void reports.push(failure),
  connectTimeoutMs: 5_000,
}));

test('sends go through the proxy to WHATSAPP_WS_URL; a failed connection probes the proxy with that server, and names the proxy', async () => {
  const target = new URL(server.url).host;
  const account = await wire.account('601850000');
  expect(await wire.sendText(account, '60185000101')).toMatchObject({ kind: 'delivered' });
  expect(new Set(proxy.connections.map((c) => c.destination))).toEqual(new Set([target]));
  expect(reports.at(-1)).toBeNull();

  // the proxy can no longer reach the server: the next connection fails, and the probe asks for the same server
  reachable = false;
  await wire.pool.close();
  const other = await wire.replica();
  const before = proxy.connections.length;
  expect(await other.sendText(account, '60185000102')).toMatchObject({ kind: 'account-wait', code: 'proxy_failed' });
  const after = proxy.connections.slice(before);
  expect(after.length).toBeGreaterThanOrEqual(2); // the socket, then the probe
  expect(after.every((c) => c.destination === target && !c.carried)).toBe(true);
  expect(reports.at(-1)).toContain(`127.0.0.1:${proxy.port}`);
}, 60_000);
