import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { globalAgent } from 'node:https';
import { systemClock } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { createRedis } from '@metronome/redis';
import type { TransportAccount } from '@metronome/transports';
import { baileysSocketFactory, readLinkedSession, WhatsAppSocketPool, WhatsAppTransport } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { imageBytes } from '../helpers/fake-telegram-files.js';
import { createTestDatabase, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';
import { credsOnlyBundle, startMediaHost, type MediaHost } from '../helpers/wire-whatsapp.js';
import { startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { insertWhatsAppAccount, quietLogger, socketLeases } from './whatsapp-setup.js';

// An image through the real Baileys: prepared once (uploaded, encrypted, to a FAKE media host of
// the test's own named by WHATSAPP_UPLOAD_HOST), then sent to two chats by that one reference.
// WhatsApp is a FAKE server of the project's own on the wire (crabline's binary codec refuses the
// image message's node and closes the socket), which records the kind of media of each message.

const KEYS = [randomBytes(32)];
let server: WireServer;
let media: MediaHost;
let database: TestDatabase;
let redis: Redis;
let pool: WhatsAppSocketPool;
let transport: WhatsAppTransport;
const trusted = globalAgent.options.ca;

beforeAll(async () => {
  [server, media, database] = await Promise.all([startWireServer(), startMediaHost(), createTestDatabase('wa_media_wire')]);
  // as NODE_EXTRA_CA_CERTS does for a sender: Baileys uploads with node's https and its global agent
  globalAgent.options.ca = readFileSync(media.caFile);
  redis = createRedis(REDIS_URL, 'test-wa-media-wire');
  pool = new WhatsAppSocketPool({
    holderId: 'media-wire-test',
    lease: socketLeases(redis, uniquePrefix('wa-media-wire')),
    auth: new WhatsAppAuthRepository(database.db),
    secretsKeys: KEYS,
    makeSocket: baileysSocketFactory,
    webSocketUrl: server.url,
    uploadHost: media.host,
    clock: systemClock,
    logger: quietLogger,
    queryTimeoutMs: 10_000,
    freshLeaseWaitMs: 0,
  });
  transport = new WhatsAppTransport({ pool, clock: systemClock, logger: quietLogger, timeoutMs: 5_000 });
}, 60_000);
afterAll(async () => {
  globalAgent.options.ca = trusted;
  await transport?.close();
  await redis?.quit();
  await database?.drop();
  await Promise.all([server?.close(), media?.close()]);
}, 30_000);

test('an image is uploaded once to WHATSAPP_UPLOAD_HOST and sent to two chats as image messages by its reference', async () => {
  const { accountId } = await insertWhatsAppAccount(database.db);
  const session = readLinkedSession(credsOnlyBundle('601770000'));
  if (!session.ok) throw new Error(session.message);
  expect(await pool.importSession(accountId, session.session)).toBeNull();
  const account: TransportAccount = { id: accountId, externalId: null, credentials: null };

  const bytes = imageBytes('png', 3_000);
  const prepared = await transport.prepareMedia(account, { mediaId: 'm1', contentType: 'image/png', sha256: 'x', filename: 'offer.png', bytes });
  if (!prepared.ok) throw new Error(JSON.stringify(prepared.result));
  expect(media.uploads).toEqual([{ kind: 'image', bytes: expect.any(Number), at: expect.any(Number) }]);
  expect(media.uploads[0]!.bytes).toBeGreaterThanOrEqual(bytes.length); // encrypted: padded, with its MAC

  for (const [i, chatId] of ['60177100001', '60177100002'].entries()) {
    const part = { type: 'media' as const, mediaRef: prepared.ref, caption: 'today only', contentType: 'image/png', filename: 'offer.png' };
    expect(await transport.send(account, { chatId, part, partIndex: 0, partCount: 1, idempotencyKey: `media-wire:${i}` })).toMatchObject({ kind: 'delivered' });
  }
  expect(server.messages.map((m) => [m.to, m.mediatype])).toEqual([
    ['60177100001@s.whatsapp.net', 'image'],
    ['60177100002@s.whatsapp.net', 'image'],
  ]);
  expect(media.uploads).toHaveLength(1);
}, 60_000);
