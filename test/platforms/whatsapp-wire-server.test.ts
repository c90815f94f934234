import { baileysSocketFactory, type WhatsAppSocket } from '@metronome/transports/whatsapp';
import type { BaileysEventMap } from '@whiskeysockets/baileys';
import { openWhatsAppSocket, type OpenSocket } from '../helpers/open-whatsapp-socket.js';
import { eventually } from '../helpers/test-env.js';
import { receipt, startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';

// Each behaviour of the project's own wire-level WhatsApp server, pinned to what the real Baileys
// socket (built by the product's own factory, as the senders build it) makes of it: the events the
// transport reads. A server that drifted from what Baileys understands fails here first.

let server: WireServer;
const sockets: WhatsAppSocket[] = [];
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  for (const s of sockets) s.end(undefined);
  await server.close();
});

const connect = async (): Promise<OpenSocket> => {
  const opened = await openWhatsAppSocket(baileysSocketFactory, { url: server.url });
  sockets.push(opened.sock);
  return opened;
};

test('Baileys completes the handshake, sends a direct message, and reads a plain ack as no error', async () => {
  const { sock } = await connect();
  const updates: BaileysEventMap['messages.update'] = [];
  sock.ev.on('messages.update', (u) => updates.push(...u));
  const sent = await sock.sendMessage('60177000002@s.whatsapp.net', { text: 'hello' });
  await eventually('the server to see the message', async () => server.messages.some((m) => m.id === sent?.key.id), 5_000, 10);
  expect(server.messages.find((m) => m.id === sent?.key.id)?.to).toBe('60177000002@s.whatsapp.net');
  expect(updates.filter((u) => u.update.status === 0)).toEqual([]); // WebMessageInfo.Status.ERROR
});

test("an ack with error 463 is a refusal in the sent message's own upsert when it comes at once (Baileys still buffers the events of the send), in messages.update when it comes later (handleBadAck)", async () => {
  const { sock } = await connect();
  const updates: BaileysEventMap['messages.update'] = [];
  const upserts: BaileysEventMap['messages.upsert']['messages'] = [];
  sock.ev.on('messages.update', (u) => updates.push(...u));
  sock.ev.on('messages.upsert', (u) => upserts.push(...u.messages));
  server.ack = (m) => (m.to.startsWith('6017700046') ? { error: '463' } : null);
  try {
    // The send's own upsert opens Baileys' event buffer; an ack landing within its ~100 ms is
    // folded. On a loaded machine this process (server and client both) may miss the window: tried
    // a few times, each refusal told one way or the other, until one lands in it.
    let folded: (typeof upserts)[number] | null = null;
    for (let attempt = 0; attempt < 5 && !folded; attempt++) {
      const first = await sock.sendMessage(`6017700046${attempt}@s.whatsapp.net`, { text: 'new chat' });
      const id = first?.key.id;
      const told = await eventually(
        'the refusal told',
        async () => upserts.find((m) => m.key.id === id && m.status === 0) ?? (updates.some((u) => u.key.id === id) ? 'update' : null),
        5_000,
        10,
      );
      if (told === 'update') continue;
      folded = told;
      expect(updates.filter((u) => u.key.id === id)).toEqual([]);
    }
    expect(folded?.messageStubParameters?.[0]).toBe('463'); // WebMessageInfo.Status.ERROR, the code first

    server.ackDelayMs = 1_000; // after the buffer's flush (Utils/event-buffer.js)
    const second = await sock.sendMessage('60177000469@s.whatsapp.net', { text: 'another new chat' });
    const update = await eventually('the refusal event', async () => updates.find((u) => u.key.id === second?.key.id) ?? null, 5_000, 10);
    expect(update.update.status).toBe(0);
    expect(update.update.messageStubParameters?.[0]).toBe('463');
  } finally {
    server.ack = () => null;
    server.ackDelayMs = 0;
  }
});

test('a conflict stream error (another connection of the device) closes the socket with 440', async () => {
  const { closed } = await connect();
  await server.push({ tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] });
  expect(await closed).toBe(440);
});

test('a failure node after the handshake (the device logged out on the phone) closes the socket with its reason, 401', async () => {
  server.failure = '401';
  try {
    await expect(connect()).rejects.toThrow('closed 401');
  } finally {
    server.failure = null;
  }
});

test("a group's receipts: within Baileys' event buffer after the send they are folded into the sent message's upsert (userReceipt), later they are message-receipt.update per member; the account's own device's `sender` receipt comes as a member's read", async () => {
  const group = '120363000000000055@g.us';
  server.groups.set(group, ['60177000201@s.whatsapp.net', '60177000202@s.whatsapp.net']);
  const { sock } = await connect();
  const receipts: BaileysEventMap['message-receipt.update'] = [];
  const upserts: BaileysEventMap['messages.upsert']['messages'] = [];
  sock.ev.on('message-receipt.update', (u) => receipts.push(...u));
  sock.ev.on('messages.upsert', (u) => upserts.push(...u.messages));
  // receipts pushed as the send returns land within the buffer of its upsert; on a loaded machine
  // they may miss it (then they come as updates): tried a few times until they land in it
  let id = '';
  let folded: (typeof upserts)[number] | undefined;
  for (let attempt = 0; attempt < 5 && (folded?.userReceipt?.length ?? 0) < 2; attempt++) {
    receipts.length = 0;
    const sent = await sock.sendMessage(group, { text: 'hello group' });
    id = sent!.key.id!;
    await server.push(receipt(id, group, 'sender', '60177000001@s.whatsapp.net'));
    await server.push(receipt(id, group, 'read', '60177000201@s.whatsapp.net'));
    folded = await eventually('the upsert', async () => upserts.find((m) => m.key.id === id) ?? null, 5_000, 10);
    await eventually('both receipts told', async () => (folded!.userReceipt?.length ?? 0) + receipts.length >= 2, 5_000, 10);
  }
  expect(folded?.userReceipt?.map((r) => [r.userJid, r.readTimestamp !== undefined])).toEqual([
    ['60177000001@s.whatsapp.net', true],
    ['60177000201@s.whatsapp.net', true],
  ]);
  expect(receipts).toEqual([]);
  await server.push(receipt(id, group, 'read', '60177000202@s.whatsapp.net'));
  await eventually('the later receipt', async () => receipts.length >= 1, 5_000, 10);
  expect(receipts.map((r) => [r.key.id, r.receipt.userJid])).toEqual([[id, '60177000202@s.whatsapp.net']]);
});

test('a direct message is decrypted at the server with the Signal library Baileys encrypts with: its content, and the identity key of the device that opened the session', async () => {
  const { sock, creds } = await connect();
  const first = await sock.sendMessage('60177000301@s.whatsapp.net', { text: 'one' });
  const second = await sock.sendMessage('60177000301@s.whatsapp.net', { text: 'two' });
  const at = (id: string | null | undefined) =>
    eventually('the decrypted message', async () => server.messages.find((m) => m.id === id && m.content !== undefined) ?? null, 5_000, 10);
  const [a, b] = [await at(first?.key.id), await at(second?.key.id)];
  // Baileys sends a text as an extendedTextMessage
  expect([a.content?.extendedTextMessage?.text, b.content?.extendedTextMessage?.text]).toEqual(['one', 'two']);
  expect(a.from).toBe('60177000001');
  // both carry the session's opening (pkmsg, until the recipient answers once) with the device's identity
  const identity = `05${Buffer.from(creds.signedIdentityKey.public).toString('hex')}`;
  expect([a.identityKey, b.identityKey]).toEqual([identity, identity]);
});
