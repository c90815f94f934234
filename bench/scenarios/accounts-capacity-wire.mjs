import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { scrapeSum, startService } from '@metronome/testkit';
import { startWhatsAppServer } from '@openclaw/crabline';
import { BufferJSON, initAuthCreds, proto } from '@whiskeysockets/baileys';

// What the accounts-capacity benchmark sees at the WhatsApp server, and how it starts senders.

/**
 * @openclaw/crabline's WhatsApp Web server behind a TCP relay: the relay counts the connections
 * open through it (and the most at once, and how many were ever opened); the server's own
 * accepted-message events give each chat's messages and when they arrived.
 */
export async function countedServer() {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-wa-'));
  const accepted = new Map();
  const server = await startWhatsAppServer({
    recorderPath: path.join(dir, 'whatsapp.jsonl'),
    onEvent: (e) => {
      if (!e.accepted) return;
      const to = e.body?.key?.remoteJid ?? e.body?.attrs?.to;
      const m = e.body?.message;
      const text = m?.conversation ?? m?.extendedTextMessage?.text ?? '';
      if (!to) return;
      const at = accepted.get(`${to}|${text}`) ?? [];
      at.push(Date.now());
      accepted.set(`${to}|${text}`, at);
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
  return {
    url: url.toString(),
    count,
    /** `${chat JID}|${text}` → the times the server accepted that message (decrypted by the server) */
    accepted,
    close: async () => {
      await new Promise((r) => relay.close(r));
      await server.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A linked device's creds as an operator's Baileys script leaves them (no keys yet), for POST /v1/accounts/{id}/session. */
export function sessionBundle(phone) {
  const creds = initAuthCreds();
  creds.me = { id: `${phone}:7@s.whatsapp.net`, name: `phone ${phone}` };
  // the phone's signature of the device: random bytes, which the server never checks
  creds.account = proto.ADVSignedDeviceIdentity.fromObject({
    details: proto.ADVDeviceIdentity.encode({ rawId: 1, timestamp: Math.floor(Date.now() / 1000), keyIndex: 1 }).finish(),
    accountSignatureKey: randomBytes(32),
    accountSignature: randomBytes(64),
    deviceSignature: randomBytes(64),
  });
  creds.registered = true;
  return { creds: JSON.parse(JSON.stringify(creds, BufferJSON.replacer)), keys: {} };
}

/** Sender processes on one stack, by name, with their metrics. */
export function senderSet(senderEnv) {
  const live = new Map();
  const start = async (name) => {
    const s = startService(name, 'services/sender/dist/main.js', senderEnv);
    const port = Number((await s.waitForLog((l) => l['msg'] === 'sender ready'))['metricsPort']);
    const x = { name, s, port, pid: s.child.pid };
    live.set(name, x);
    return x;
  };
  const metric = (x, name) => scrapeSum(`http://127.0.0.1:${x.port}/metrics`, name);
  return {
    live,
    start,
    metric,
    sockets: (x) => metric(x, 'metronome_platform_sockets_open'),
    stop: async (name, signal) => {
      const x = live.get(name);
      live.delete(name);
      await x.s.stop(signal);
    },
    stopAll: () => Promise.all([...live.values()].map((x) => x.s.stop('SIGKILL').catch(() => undefined))),
  };
}

/** Each account's lease holder as a sender's pid (null: free). */
export async function holderPids(redis, keyPrefix, ids) {
  const held = await redis.mget(ids.map((id) => `${keyPrefix}:account:${id}:socket`));
  return held.map((h) => (h ? Number(h.split(':')[2]) : null));
}
