import { ManualClock } from '@metronome/core';
import { eventually } from '../helpers/test-env.js';
import { startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { wirePoolForFile } from './wire-setup.js';

// Another connection of the same device replaces the account's open one (WhatsApp's `conflict`
// stream error, which the real Baileys socket closes with 440): the operator's other program, or
// a replica that lost its lease. Taking the session straight back would make the two throw each
// other out; the account waits (`connection_replaced`) instead. WhatsApp here is a FAKE server of
// this project's own on the wire (test/helpers/wire-whatsapp-server.ts).

const clock = new ManualClock(Date.parse('2026-12-01T09:00:00Z'));
let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server?.close();
});
const wire = wirePoolForFile('conflict_wire', () => ({ url: server.url, clock }));

test('a connection replaced after it opened is not taken back: sends and typing wait (connection_replaced) until the hold ends', async () => {
  const account = await wire.account('601990000');
  expect(await wire.sendText(account, '60199000001')).toMatchObject({ kind: 'delivered' });
  const opened = server.opened;
  await server.push({ tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] });
  await eventually('the socket to close', async () => !wire.pool.isOpen(account.id), 5_000, 10);

  expect(await wire.sendText(account, '60199000002')).toEqual({ kind: 'account-wait', code: 'connection_replaced', retryAfterMs: 60_000 });
  await wire.transport.showTyping(account, '60199000002', { type: 'text', text: 'x' });
  expect(server.opened).toBe(opened); // no new login: the other connection keeps the session
  expect(server.messages.map((m) => m.to)).toEqual(['60199000001@s.whatsapp.net']);

  clock.advance(60_000);
  expect(await wire.sendText(account, '60199000002')).toMatchObject({ kind: 'delivered' });
  expect(server.opened).toBe(opened + 1);
}, 60_000);
