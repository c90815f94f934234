import type { MessageReceipt } from '@metronome/transports/whatsapp';
import { eventually } from '../helpers/test-env.js';
import { receipt, startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { wirePoolForFile } from './wire-setup.js';

// Receipts of a group message as the real Baileys socket reads them from a FAKE WhatsApp Web
// server of this project's own (test/helpers/wire-whatsapp-server.ts): Baileys turns the receipt
// of the operator's own phone or other linked device (`sender`) into a member's read
// (handleReceipt: any status past SERVER_ACK is a `readTimestamp`); it is no reader. Receipts
// that come while Baileys still buffers the send's events are folded into its upsert (pinned in
// whatsapp-wire-server.test.ts); later ones are updates: both are told.

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server?.close();
});
const receipts: MessageReceipt[] = [];
const wire = wirePoolForFile('receipts_wire', () => ({ url: server.url, onReceipt: (r) => receipts.push(r) }));

test("a group message's receipts: the members' reads and deliveries are told, the account's own devices never count as readers", async () => {
  const group = '120363000000000077@g.us';
  server.groups.set(group, ['60187000101@s.whatsapp.net', '60187000102@s.whatsapp.net']);
  const account = await wire.account('601870000');
  expect(await wire.sendText(account, group)).toMatchObject({ kind: 'delivered' });
  // the send resolves once Baileys wrote the frame; the server (in this process) reads it a moment later
  const { id } = await eventually('the message at the server', async () => server.messages.find((m) => m.to === group) ?? null, 10_000, 10);
  // the operator's phone (device 0) and another of its linked devices got the message
  await server.push(receipt(id, group, 'sender', '601870000@s.whatsapp.net'));
  await server.push(receipt(id, group, 'sender', '601870000:3@s.whatsapp.net'));
  await server.push(receipt(id, group, undefined, '60187000102@s.whatsapp.net'));
  await server.push(receipt(id, group, 'read', '60187000101@s.whatsapp.net'));
  await eventually('the members told', async () => receipts.length >= 2, 5_000, 10);
  // a later receipt, after the buffer's flush: an update, read in order after the others
  await server.push(receipt(id, group, 'read', '60187000102@s.whatsapp.net'));
  await eventually('the last one told', async () => receipts.length >= 3, 5_000, 10);
  expect(receipts.map((r) => [r.member, r.status])).toEqual([
    ['60187000102@s.whatsapp.net', 'delivered'],
    ['60187000101@s.whatsapp.net', 'read'],
    ['60187000102@s.whatsapp.net', 'read'],
  ]);
  expect(receipts.every((r) => r.messageId === id && r.memberCount === 2)).toBe(true);
}, 60_000);
