import type { MessageRefusal } from '@metronome/transports/whatsapp';
import { eventually } from '../helpers/test-env.js';
import { retryReceipt, startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { wirePoolForFile } from './wire-setup.js';

// Messages WhatsApp refuses after the write (a server ERROR ack), as the real Baileys socket reads
// them from a FAKE WhatsApp Web server of this project's own on the wire
// (test/helpers/wire-whatsapp-server.ts; its behaviours pinned in whatsapp-wire-server.test.ts).
// This file checks the path through pool and transport with acks that arrive as updates; an ack
// Baileys folds into the sent message's own upsert (Utils/event-buffer.js) depends on timing
// here, so that case is pinned in whatsapp-wire-server.test.ts and held by message-status.test.ts.

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server?.close();
});
const refusals: MessageRefusal[] = [];
const wire = wirePoolForFile('refusals_wire', () => ({ url: server.url, onMessageRefused: (r) => refusals.push(r) }));

test("479 and then 463 after the write reach the sender as refusals of those chats; the account's new chats are held after the 463", async () => {
  const account = await wire.account('601880000');
  server.ack = ({ to }) => (to.startsWith('60188000479') ? { error: '479' } : to.startsWith('60188000463') ? { error: '463' } : null);

  // the first send on a new socket
  expect(await wire.sendText(account, '60188000479')).toMatchObject({ kind: 'delivered' });
  await eventually('the 479 told', async () => refusals.length === 1, 5_000, 10);
  expect(refusals[0]).toMatchObject({ accountId: account.id, chatId: '60188000479', refusal: { kind: 'rejected', code: 'message_invalid' } });

  expect(await wire.sendText(account, '60188000463')).toMatchObject({ kind: 'delivered' });
  await eventually('the 463 told', async () => refusals.length === 2, 5_000, 10);
  expect(refusals[1]).toMatchObject({ accountId: account.id, chatId: '60188000463', refusal: { kind: 'new-chat-refused', code: 'new_chat_refused' } });
  // the account's next new chat is held, not written, until an operator lifts it (whatsapp-new-chats-wire.test.ts)
  await eventually('the hold recorded', async () => (await wire.pool.newChats.hold(account.id)) !== null, 5_000, 10);
  expect(await wire.sendText(account, '60188000001')).toMatchObject({ kind: 'chat-wait', code: 'new_chats_refused' });
  expect(server.messages.map((m) => m.to)).toEqual(['60188000479@s.whatsapp.net', '60188000463@s.whatsapp.net']);
}, 60_000);

test('a device asks for a message again and WhatsApp refuses the re-send to that device (479): the message stands, no refusal is told for its chat', async () => {
  const account = await wire.account('601880010');
  server.ack = ({ to }) => (to.includes(':') || to.startsWith('60188001479') ? { error: '479' } : null);
  expect(await wire.sendText(account, '60188001001')).toMatchObject({ kind: 'delivered' });
  // the send resolves once Baileys wrote the frame; the server (in this process) reads it a moment later
  const { id } = await eventually(
    'the message at the server',
    async () => server.messages.find((m) => m.to === '60188001001@s.whatsapp.net') ?? null,
    10_000,
    10,
  );
  // Baileys answers the retry receipt with a re-send under the same id, to that device only
  await server.push(retryReceipt(id, '60188001001:1@s.whatsapp.net'));
  await eventually('the re-send at the server', async () => server.messages.filter((m) => m.id === id).length === 2, 10_000, 20);
  expect(server.messages.filter((m) => m.id === id).map((m) => m.to)).toEqual(['60188001001@s.whatsapp.net', '60188001001:1@s.whatsapp.net']);
  // acks are read in order: once a later message's refusal is told, the re-send's ack was read
  expect(await wire.sendText(account, '60188001479')).toMatchObject({ kind: 'delivered' });
  await eventually('the later refusal told', async () => refusals.some((r) => r.chatId === '60188001479'), 5_000, 10);
  expect(refusals.filter((r) => r.chatId === '60188001001')).toEqual([]);
}, 60_000);
