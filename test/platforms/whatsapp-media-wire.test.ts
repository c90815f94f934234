import { readFileSync } from 'node:fs';
import { globalAgent } from 'node:https';
import { imageBytes } from '../helpers/fake-telegram-files.js';
import { eventually } from '../helpers/test-env.js';
import { startMediaHost, type MediaHost } from '../helpers/wire-whatsapp.js';
import { startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { wirePoolForFile } from './wire-setup.js';

// An image through the real Baileys: prepared once (uploaded, encrypted, to a FAKE media host of
// the test's own named by WHATSAPP_UPLOAD_HOST), then sent to two chats by that one reference.
// WhatsApp is a FAKE server of the project's own on the wire (crabline's binary codec refuses the
// image message's node and closes the socket), which records the kind of media of each message.

let server: WireServer;
let media: MediaHost;
const trusted = globalAgent.options.ca;
beforeAll(async () => {
  [server, media] = await Promise.all([startWireServer(), startMediaHost()]);
  // as NODE_EXTRA_CA_CERTS does for a sender: Baileys uploads with node's https and its global agent
  globalAgent.options.ca = readFileSync(media.caFile);
});
afterAll(async () => {
  globalAgent.options.ca = trusted;
  await Promise.all([server?.close(), media?.close()]);
});
const wire = wirePoolForFile('media_wire', () => ({ url: server.url, uploadHost: media.host }));

test('an image is uploaded once to WHATSAPP_UPLOAD_HOST and sent to two chats as image messages by its reference', async () => {
  const account = await wire.account('601770000');

  const bytes = imageBytes('png', 3_000);
  const prepared = await wire.transport.prepareMedia(account, { mediaId: 'm1', contentType: 'image/png', sha256: 'x', filename: 'offer.png', bytes });
  if (!prepared.ok) throw new Error(JSON.stringify(prepared.result));
  expect(media.uploads).toEqual([{ kind: 'image', bytes: expect.any(Number), at: expect.any(Number) }]);
  expect(media.uploads[0]!.bytes).toBeGreaterThanOrEqual(bytes.length); // encrypted: padded, with its MAC

  for (const [i, chatId] of ['60177100001', '60177100002'].entries()) {
    const part = { type: 'media' as const, mediaRef: prepared.ref, caption: 'today only', contentType: 'image/png', filename: 'offer.png' };
    expect(await wire.transport.send(account, { chatId, part, partIndex: 0, partCount: 1, idempotencyKey: `media-wire:${i}` })).toMatchObject({
      kind: 'delivered',
    });
  }
  // a send resolves when Baileys wrote the frame; the server (in this process) reads it a moment later
  await eventually('the server to take both messages', async () => server.messages.length >= 2, 10_000, 10);
  expect(server.messages.map((m) => [m.to, m.mediatype])).toEqual([
    ['60177100001@s.whatsapp.net', 'image'],
    ['60177100002@s.whatsapp.net', 'image'],
  ]);
  expect(media.uploads).toHaveLength(1);
}, 60_000);
