import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseProxy, type ProxySettings } from '@metronome/core';
import { fetchVersionThrough, resolveWhatsAppVersion } from '@metronome/transports/whatsapp';
import { quietLogger } from './whatsapp-setup.js';
import { startTestSocks5Proxy, type TestSocks5Proxy } from '../helpers/test-socks5-proxy.js';
import { selfSignedCertificate } from '../helpers/wire-whatsapp.js';

// WHATSAPP_VERSION_PROXY: the WhatsApp Web version fetch goes through a SOCKS proxy, asked for
// web.whatsapp.com:443 by name (socks5h). This machine cannot reach WhatsApp: the proxy routes
// that name to a FAKE WhatsApp Web here (HTTPS, a certificate made for web.whatsapp.com) that
// serves a sw.js as WhatsApp's carries its client revision.

let dir: string;
let web: Server;
let ca: Buffer;
let proxy: TestSocks5Proxy;
const requests: string[] = [];
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'wa-web-'));
  const { key, cert } = selfSignedCertificate(dir, 'web.whatsapp.com', 'DNS:web.whatsapp.com');
  ca = await readFile(cert);
  web = createServer({ key: await readFile(key), cert: ca }, (req, res) => {
    requests.push(`${req.method} ${req.url} ${req.headers['sec-fetch-site']}`);
    res
      .writeHead(200, { 'content-type': 'text/javascript' })
      .end('self.__swData=JSON.parse(/*BTDS*/"{\\"dynamic_data\\":{\\"SiteData\\":{\\"client_revision\\":1031234567}}}");');
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  const port = (web.address() as AddressInfo).port;
  proxy = await startTestSocks5Proxy({ route: (d) => (d === 'web.whatsapp.com:443' ? { host: '127.0.0.1', port } : null) });
});
afterAll(async () => {
  await proxy?.close();
  await new Promise((r) => web?.close(r));
  await rm(dir, { recursive: true, force: true });
});

const settings = (): ProxySettings => parseProxy(`socks5h://127.0.0.1:${proxy.port}`, 'whatsapp') as ProxySettings;

test('the version is fetched through the proxy, WhatsApp Web named to it, and read as Baileys reads it', async () => {
  const fetch = fetchVersionThrough(settings(), undefined, ca);
  expect(await fetch({ signal: AbortSignal.timeout(10_000) })).toEqual({ version: [2, 3000, 1031234567], isLatest: true });
  expect(proxy.connections.map((c) => [c.destination, c.carried])).toEqual([['web.whatsapp.com:443', true]]);
  expect(requests).toEqual(['GET /sw.js none']);
});

test('a proxy that refuses: the start goes on with the bundled version, and nothing reached WhatsApp Web', async () => {
  const before = requests.length;
  const refusing = await startTestSocks5Proxy({ login: { user: 'u', password: 'right' } });
  try {
    const p = parseProxy(`socks5h://u:wrong@127.0.0.1:${refusing.port}`, 'whatsapp') as ProxySettings;
    const resolved = await resolveWhatsAppVersion({ configured: null, fetchLatest: true, logger: quietLogger, fetch: fetchVersionThrough(p, undefined, ca) });
    expect(resolved).toEqual({ version: null, source: 'bundled' });
    expect(refusing.refusedLogins).toBe(1);
    expect(requests).toHaveLength(before);
  } finally {
    await refusing.close();
  }
});
