import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEVELOPMENT_SECRETS_KEY } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { createRedis, loadScripts, redisKeys, SocketLeases } from '@metronome/redis';
import { baileysSocketFactory, readLinkedSession, WhatsAppSocketPool, WhatsAppTransport } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { eventually, REDIS_URL, uniquePrefix } from '../helpers/test-env.js';
import { credsOnlyBundle, startWireWhatsApp, type WireWhatsApp } from '../helpers/wire-whatsapp.js';
import { lateAuthStore, quietLogger } from '../platforms/whatsapp-setup.js';

// The sender's job with the real Baileys socket against @openclaw/crabline's WhatsApp Web server (a fake platform nobody here
// wrote), through a relay that can hold what the socket writes: the send waits on its first query (Baileys' device lookup),
// before its message is written. The pool closing under it — what a stopping sender's closePlatforms does — is this replica's
// own close: the target goes back to `pending` with the hand-over's code and no attempt counted. The server dropping the
// connection under the same wait stays a retriable failure, one attempt.

/** A WebSocket relay to the server: `hold` keeps what the client writes from then on; `drop` closes the server's side. */
interface Relay {
  url: string;
  hold: boolean;
  held: number;
  drop(): void;
  close(): Promise<void>;
}

async function startRelay(target: string): Promise<Relay> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: http });
  const links = new Set<{ client: WebSocket; server: WebSocket }>();
  const relay: Relay = {
    url: '',
    hold: false,
    held: 0,
    drop: () => {
      for (const l of links) l.client.terminate();
    },
    close: async () => {
      relay.drop();
      wss.close();
      await new Promise((r) => http.close(r));
    },
  };
  wss.on('connection', (client) => {
    const server = new WebSocket(target);
    const link = { client, server };
    links.add(link);
    const early: RawData[] = [];
    server.on('open', () => early.splice(0).forEach((m) => server.send(m)));
    server.on('message', (m) => client.readyState === WebSocket.OPEN && client.send(m));
    client.on('message', (m) => {
      if (relay.hold) relay.held++;
      else if (server.readyState === WebSocket.OPEN) server.send(m);
      else early.push(m);
    });
    const end = () => {
      links.delete(link);
      client.terminate();
      server.terminate();
    };
    client.on('close', end);
    server.on('close', end);
    server.on('error', end);
    client.on('error', end);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  relay.url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/ws/chat`;
  return relay;
}

let crabline: WireWhatsApp;
beforeAll(async () => {
  crabline = await startWireWhatsApp();
});
afterAll(async () => {
  await crabline?.close();
});

let h: SenderHarness;
let redis: Redis;
let relay: Relay;
let pool: WhatsAppSocketPool;
beforeEach(async () => {
  relay = await startRelay(crabline.url);
  redis = createRedis(REDIS_URL, 'test-wa-stop');
  const leases = new SocketLeases(loadScripts(redis), redisKeys(uniquePrefix('wa-stop')));
  let auth: WhatsAppAuthRepository | null = null;
  h = await startSenderHarness({ sendTimeoutMs: 5_000 }, undefined, {
    transports: (clock) => {
      pool = new WhatsAppSocketPool({
        holderId: 'stop-test',
        lease: leases,
        auth: lateAuthStore(() => auth!),
        secretsKeys: [DEVELOPMENT_SECRETS_KEY],
        makeSocket: baileysSocketFactory,
        webSocketUrl: relay.url,
        logger: quietLogger,
        // the device query the relay holds fails by then (Baileys stops listening for its answer on close)
        queryTimeoutMs: 2_000,
        freshLeaseWaitMs: 0,
        clock,
      });
      return { whatsapp: new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: 5_000 }) };
    },
  });
  auth = new WhatsAppAuthRepository(h.tdb.db);
}, 30_000);
afterEach(async () => {
  await h?.close();
  await redis?.quit();
  await relay?.close();
}, 30_000);

/** A run of one text to one new direct chat, its account's socket open (imported, then opened by a first use). */
async function runWaitingOnTheWire(phone: string, chat: string): Promise<{ runId: string; job: Promise<unknown> }> {
  const { tenantId, accountId } = await h.seedAccount({ platform: 'whatsapp' });
  const session = readLinkedSession(credsOnlyBundle(phone));
  if (!session.ok) throw new Error(session.message);
  expect(await pool.importSession(accountId, session.session)).toBeNull();
  expect(await pool.use(accountId, async () => 'open')).toMatchObject({ ok: true });
  const runId = await h.seedRun({ tenantId, accountId, targets: [chat], parts: [{ type: 'text', text: `to ${chat}` }] });
  relay.hold = true;
  const job = h.runJob(runId);
  await eventually('the send to wait on the server', async () => relay.held > 0, 10_000);
  return { runId, job };
}

test('the pool closed under a send waiting before its write (a stopping sender): pending, no attempt, the hand-over code', async () => {
  const { runId, job } = await runWaitingOnTheWire('60125000301', '60125000311');
  await pool.close();
  await job;
  const [target] = await h.targets(runId);
  expect(target).toMatchObject({ status: 'pending', attempts: 0, error_code: 'socket_handover' });
  expect(crabline.accepted.map((m) => m.text)).not.toContain('to 60125000311');
}, 30_000);

test('the server dropping the connection under the same wait stays a retriable failure: one attempt', async () => {
  const { runId, job } = await runWaitingOnTheWire('60125000302', '60125000312');
  relay.drop();
  await job;
  const [target] = await h.targets(runId);
  expect(target).toMatchObject({ status: 'pending', attempts: 1 });
  expect(target!.error_code).not.toBe('socket_handover');
}, 30_000);
