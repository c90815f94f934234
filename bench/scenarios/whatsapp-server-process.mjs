import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { register } from 'node:module';

// @openclaw/crabline's WhatsApp Web server behind a TCP relay, in a process of its own (forked by
// accounts-capacity-wire.mjs) so its CPU is not the benchmark's. The relay counts the connections
// open through it; the server's accepted messages go to the parent in batches as [key, ms].
// Two of the server's test-sized limits are lifted: crabline-capacity-hooks.mjs.
const FLUSH_MS = 100;
// libsignal (under the server) prints every Signal session it opens or closes: formatting them is CPU the server lacks
console.info = console.warn = console.log = () => undefined;

register('./crabline-capacity-hooks.mjs', import.meta.url);
const { startWhatsAppServer } = await import('@openclaw/crabline');
const dir = await mkdtemp(path.join(tmpdir(), 'bench-wa-'));
let batch = [];
const server = await startWhatsAppServer({
  recorderPath: path.join(dir, 'whatsapp.jsonl'),
  onEvent: (e) => {
    if (!e.accepted) return;
    const to = e.body?.key?.remoteJid ?? e.body?.attrs?.to;
    const m = e.body?.message;
    const text = m?.conversation ?? m?.extendedTextMessage?.text ?? '';
    if (to) batch.push([`${to}|${text}`, Date.now()]);
  },
});
const target = new URL(server.manifest.endpoints.baileysWebSocketUrl);
const count = { open: 0, most: 0, opened: 0 };
const relay = net.createServer((client) => {
  const upstream = net.connect(Number(target.port), target.hostname);
  count.opened++;
  count.most = Math.max(count.most, ++count.open);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    count.open--;
    client.destroy();
    upstream.destroy();
  };
  client.pipe(upstream).pipe(client);
  client.on('close', close).on('error', close);
  upstream.on('close', close).on('error', close);
});
await new Promise((r) => relay.listen(0, '127.0.0.1', r));
const url = new URL(target);
url.port = String(relay.address().port);

const flush = () => {
  process.send({ type: 'state', count, accepted: batch });
  batch = [];
};
const timer = setInterval(flush, FLUSH_MS);
process.on('message', async (m) => {
  if (m.type === 'resetMost') {
    count.most = count.open;
    flush();
  } else if (m.type === 'close') {
    clearInterval(timer);
    await new Promise((r) => relay.close(r));
    await server.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  }
});
process.send({ type: 'ready', url: url.toString() });
