import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { globalAgent } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '@metronome/core';
import { baileysSocketFactory, failureOf, type WhatsAppSocket } from '@metronome/transports/whatsapp';
import { type BinaryNode, isLidUser, jidNormalizedUser } from '@whiskeysockets/baileys';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { openWhatsAppSocket } from '../helpers/open-whatsapp-socket.js';
import { eventually } from '../helpers/test-env.js';
import { startMediaHost } from '../helpers/wire-whatsapp.js';
import { retryReceipt, startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';

// The API-level FAKE WhatsApp's device-side behaviours, each run through it and through the real
// Baileys socket (the product's factory) against the project's wire-level server, with the same
// outcome expected (the message-side ones: whatsapp-fake-pins.test.ts): connections replaced or
// turned away, rate-overlimit, pairing, group notifications, uploads, identities, incoming texts,
// retry receipts. Each test opens its own pair of sockets.

let server: WireServer;
const network = new FakeWhatsAppNetwork(new ManualClock(Date.now()));
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server?.close();
});

test('another connection of the device replaces an open one: both close it with 440 (connectionReplaced)', async () => {
  const onWire = await openWhatsAppSocket(baileysSocketFactory, { url: server.url, phone: '60177000600' });
  const onFake = await openWhatsAppSocket(network.factory, { accountId: 'replaced' });
  // WhatsApp's `conflict` stream error to the open one; the fake replaces it when the device connects again
  await server.push({ tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] });
  const again = await openWhatsAppSocket(network.factory, { accountId: 'replaced' });
  try {
    expect(await onFake.closed).toBe(await onWire.closed);
    expect(await onWire.closed).toBe(440);
  } finally {
    again.sock.end(undefined);
  }
});

test("WhatsApp's rate-overlimit on the device lookup before a write: the send throws the same error, read the same way", async () => {
  const onWire = await openWhatsAppSocket(baileysSocketFactory, { url: server.url, phone: '60177000700' });
  const onFake = await openWhatsAppSocket(network.factory, { accountId: 'overlimit' });
  server.overlimit = true;
  network.failNext('overlimit', 'rate-overlimit');
  try {
    const thrown = async (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => failureOf(e),
      );
    const real = await thrown(onWire.sock.sendMessage('60177000701@s.whatsapp.net', { text: 'hi' }));
    const fake = await thrown(onFake.sock.sendMessage('60177000701@s.whatsapp.net', { text: 'hi' }, { messageId: 'PIN7' }));
    expect(fake).toEqual(real);
    expect(real).toEqual({ source: 'query', code: 429, message: 'rate-overlimit' });
  } finally {
    server.overlimit = false;
    onWire.sock.end(undefined);
    onFake.sock.end(undefined);
  }
});

test("a new device's first pairing QR: the same payload but for the server's ref (its keys, its secret, the browser it names)", async () => {
  const onWire = await openWhatsAppSocket(baileysSocketFactory, { url: server.url, unpaired: true });
  const onFake = await openWhatsAppSocket(network.factory, { accountId: 'pairing', unpaired: true });
  try {
    // ref,noise key,identity key,adv secret,platform (Baileys' buildPairingQRData), each from its own fresh creds
    const expected = (o: typeof onWire) => [
      Buffer.from(o.creds.noiseKey.public).toString('base64'),
      Buffer.from(o.creds.signedIdentityKey.public).toString('base64'),
      o.creds.advSecretKey,
    ];
    const [wireRef, ...wireRest] = onWire.qr!.split(',');
    const [fakeRef, ...fakeRest] = onFake.qr!.split(',');
    expect([wireRef!.length > 0, fakeRef!.length > 0]).toEqual([true, true]);
    expect(wireRest.slice(0, 3)).toEqual(expected(onWire));
    expect(fakeRest.slice(0, 3)).toEqual(expected(onFake));
    expect(fakeRest.slice(3)).toEqual(wireRest.slice(3));
  } finally {
    onWire.sock.end(undefined);
    onFake.sock.end(undefined);
  }
});

test("a group's notifications (renamed, only admins post, the account promoted, then removed) come as the same group events", async () => {
  const group = '120363000000000901@g.us';
  const admin = '60177000999@s.whatsapp.net';
  const onWire = await openWhatsAppSocket(baileysSocketFactory, { url: server.url, phone: '60177000900' });
  const onFake = await openWhatsAppSocket(network.factory, { accountId: 'grouped' });
  network.groupBook.join('grouped', group, { addressing: 'pn', others: 1 });
  const fakeAdmin = network.groupBook.metadata(group).owner!;
  /** Group events, with the account and the group's admin named by role. */
  const roles = (sock: WhatsAppSocket, adminJid: string) => {
    const seen: unknown[] = [];
    const who = (jid: string | null | undefined) =>
      jid === adminJid ? 'admin' : jid && sock.user && jid.split('@')[0] === sock.user.id.split(/[:@]/)[0] ? 'account' : jid;
    sock.ev.on('group-participants.update', (u) =>
      seen.push({ action: u.action, by: who(u.author), who: u.participants.map((p) => who(typeof p === 'string' ? p : p.id)) }),
    );
    sock.ev.on('groups.update', (us) => {
      for (const u of us)
        seen.push({ by: who(u.author), ...(u.subject !== undefined && { subject: u.subject }), ...(u.announce !== undefined && { announce: u.announce }) });
    });
    return seen;
  };
  const wireSeen = roles(onWire.sock, admin);
  const fakeSeen2 = roles(onFake.sock, fakeAdmin);
  const me = '60177000900@s.whatsapp.net';
  const gp2 = (child: BinaryNode) =>
    server.push({
      tag: 'notification',
      attrs: { type: 'w:gp2', from: group, participant: admin, id: `gp2-${child.tag}`, t: String(Math.floor(Date.now() / 1000)) },
      content: [child],
    });
  // one at a time: Baileys buffers groups.update (not participants) and keeps only the first
  // change of a group within one buffer window (Utils/event-buffer.js groupUpdates)
  const steps: [BinaryNode, () => void][] = [
    [{ tag: 'subject', attrs: { subject: 'Renamed' } }, () => network.groupBook.rename(group, 'Renamed')],
    [{ tag: 'announcement', attrs: {} }, () => network.groupBook.setAnnounce(group, true)],
    [{ tag: 'promote', attrs: {}, content: [{ tag: 'participant', attrs: { jid: me } }] }, () => network.groupBook.setAdmin('grouped', group, true)],
    [{ tag: 'remove', attrs: {}, content: [{ tag: 'participant', attrs: { jid: me } }] }, () => network.groupBook.remove('grouped', group)],
  ];
  try {
    for (const [n, [node, onFakeSide]] of steps.entries()) {
      await gp2(node);
      onFakeSide();
      await eventually(`group event ${n + 1} from each`, async () => wireSeen.length > n && fakeSeen2.length > n, 10_000, 10).catch((e) => {
        throw new Error(`${String(e)}: wire ${JSON.stringify(wireSeen)} fake ${JSON.stringify(fakeSeen2)}`);
      });
    }
    expect(fakeSeen2).toEqual(wireSeen);
    expect(wireSeen).toEqual([
      { by: 'admin', subject: 'Renamed' },
      { by: 'admin', announce: true },
      { action: 'promote', by: 'admin', who: ['account'] },
      { action: 'remove', by: 'admin', who: ['account'] },
    ]);
  } finally {
    onWire.sock.end(undefined);
    onFake.sock.end(undefined);
  }
});

test("an encrypted upload: the same answer (the file's URL and WhatsApp's direct path)", async () => {
  const media = await startMediaHost();
  const trusted = globalAgent.options.ca;
  // as NODE_EXTRA_CA_CERTS does for a sender: Baileys uploads with node's https and its global agent
  globalAgent.options.ca = readFileSync(media.caFile);
  const onWire = await openWhatsAppSocket(baileysSocketFactory, { url: server.url, phone: '60177001000', uploadHost: media.host });
  const onFake = await openWhatsAppSocket(network.factory, { accountId: 'uploads' });
  const file = path.join(tmpdir(), `pin-upload-${process.pid}.enc`);
  try {
    const bytes = randomBytes(4_000);
    await writeFile(file, bytes);
    const opts = { mediaType: 'image' as const, fileEncSha256B64: createHash('sha256').update(bytes).digest('base64'), timeoutMs: 10_000 };
    const [real, fake] = [await onWire.sock.waUploadToServer(file, opts), await onFake.sock.waUploadToServer(file, opts)];
    // Baileys passes the host's optional fields on, undefined when the host gives none
    const shape = (r: typeof real) => ({
      keys: Object.keys(r)
        .filter((k) => r[k as keyof typeof r] !== undefined)
        .sort(),
      url: /^https:\/\/[^/]+\/v\//.test(r.mediaUrl),
      path: r.directPath.startsWith('/v/t62.7118-24/'),
    });
    expect(shape(fake)).toEqual(shape(real));
    expect(shape(real)).toEqual({ keys: ['directPath', 'mediaUrl'], url: true, path: true });
  } finally {
    globalAgent.options.ca = trusted;
    await rm(file, { force: true });
    onWire.sock.end(undefined);
    onFake.sock.end(undefined);
    await media.close();
  }
});

test("a person's two identities: a phone number's LID as the device lookup learns it, and back", async () => {
  const onWire = await openWhatsAppSocket(baileysSocketFactory, { url: server.url, phone: '60177001100' });
  const onFake = await openWhatsAppSocket(network.factory, { accountId: 'lids' });
  try {
    const pn = '60177001101@s.whatsapp.net';
    // the user's LID as each server knows it (the wire server gives a person's LID their number's digits)
    network.lids.assign('60177001101', '60177001101');
    const roundTrip = async (sock: WhatsAppSocket) => {
      const lid = await sock.signalRepository.lidMapping.getLIDForPN(pn);
      const back = lid ? await sock.signalRepository.lidMapping.getPNForLID(lid) : null;
      return { lid: lid !== null && isLidUser(lid), back: back && jidNormalizedUser(back) };
    };
    const [real, fake] = [await roundTrip(onWire.sock), await roundTrip(onFake.sock)];
    expect(fake).toEqual(real);
    expect(real).toEqual({ lid: true, back: pn });
  } finally {
    onWire.sock.end(undefined);
    onFake.sock.end(undefined);
  }
});

test('a pairing code asked for a phone number: the same code shape, told in creds.update with the same `me`', async () => {
  const onWire = await openWhatsAppSocket(baileysSocketFactory, { url: server.url, unpaired: true });
  const onFake = await openWhatsAppSocket(network.factory, { accountId: 'code', unpaired: true });
  const told = (sock: WhatsAppSocket) => {
    const updates: { pairingCode?: string | null; me?: unknown }[] = [];
    sock.ev.on('creds.update', (u) => updates.push({ pairingCode: u.pairingCode, me: u.me }));
    return updates;
  };
  const [wireTold, fakeTold] = [told(onWire.sock), told(onFake.sock)];
  try {
    const codes = [await onWire.sock.requestPairingCode('60177001200'), await onFake.sock.requestPairingCode('60177001200')];
    const shape = (code: string, updates: typeof wireTold) => ({
      // Baileys' Crockford alphabet (Utils/generics.js): no 0, I, O, U
      code: /^[1-9A-HJ-NP-TV-Z]{8}$/.test(code),
      told: updates.map((u) => ({ sameCode: u.pairingCode === code, me: u.me })),
    });
    expect(shape(codes[1]!, fakeTold)).toEqual(shape(codes[0]!, wireTold));
    expect(shape(codes[0]!, wireTold)).toEqual({ code: true, told: [{ sameCode: true, me: { id: '60177001200@s.whatsapp.net', name: '~' } }] });
  } finally {
    onWire.sock.end(undefined);
    onFake.sock.end(undefined);
  }
});

test.each([
  ['401', 'the device was logged out on the phone'],
  ['405', 'the client version is outdated'],
])('a connection WhatsApp turns away after the handshake (%s: %s): both close with that code', async (code) => {
  server.failure = code;
  network.answers.refuseConnect(`refused-${code}`, Number(code));
  try {
    const closedWith = async (opening: Promise<unknown>) =>
      opening.then(
        () => 'opened',
        (e: Error) => e.message,
      );
    const real = await closedWith(openWhatsAppSocket(baileysSocketFactory, { url: server.url, phone: `6017700130${code.at(-1)}` }));
    const fake = await closedWith(openWhatsAppSocket(network.factory, { accountId: `refused-${code}` }));
    expect(fake).toEqual(real);
    expect(real).toBe(`closed ${code}`);
  } finally {
    server.failure = null;
  }
});

test('a text a person writes to the account: the same notify upsert (who, what), through the fake and through Baileys decrypting what the server encrypted to the keys the account uploaded', async () => {
  server.preKeyCount = 3; // few left: Baileys uploads more on connecting, which the server keeps
  const onWire = await openWhatsAppSocket(baileysSocketFactory, { url: server.url, phone: '60177001400' });
  const onFake = await openWhatsAppSocket(network.factory, { accountId: 'incoming' });
  server.preKeyCount = 50;
  const incoming = (sock: WhatsAppSocket) => {
    const seen: unknown[] = [];
    sock.ev.on('messages.upsert', ({ messages, type }) => {
      for (const m of messages)
        if (!m.key.fromMe)
          seen.push({ type, from: m.key.remoteJid?.split(/[:@]/)[0], text: m.message?.conversation ?? m.message?.extendedTextMessage?.text ?? null });
    });
    return seen;
  };
  const [wireSeen, fakeSeen2] = [incoming(onWire.sock), incoming(onFake.sock)];
  try {
    await eventually(
      'the text written, once the account uploaded its keys',
      async () =>
        await server.sendText('60177001401@s.whatsapp.net', '60177001400', 'STOP').then(
          () => true,
          () => false,
        ),
      10_000,
      20,
    );
    network.fakeIncomingMessage('incoming', { from: '60177001401@s.whatsapp.net', text: 'STOP' });
    await eventually('the text read by each', async () => wireSeen.length > 0 && fakeSeen2.length > 0, 10_000, 10);
    expect(fakeSeen2).toEqual(wireSeen);
    expect(wireSeen).toEqual([{ type: 'notify', from: '60177001401', text: 'STOP' }]);
  } finally {
    onWire.sock.end(undefined);
    onFake.sock.end(undefined);
  }
});

test("a device asks again for a message this socket did not send (it restarted, or another replica sent it): both ask the pool's getMessage for it", async () => {
  const asked: { side: string; remoteJid?: string | null; id?: string | null }[] = [];
  const getMessage = (side: string) => async (key: { remoteJid?: string | null; id?: string | null }) => {
    asked.push({ side, remoteJid: key.remoteJid, id: key.id });
    return undefined;
  };
  const onWire = await openWhatsAppSocket(baileysSocketFactory, { url: server.url, phone: '60177001500', getMessage: getMessage('wire') });
  const onFake = await openWhatsAppSocket(network.factory, { accountId: 'retried', getMessage: getMessage('fake') });
  try {
    await server.push(retryReceipt('MSG-BEFORE-RESTART', '60177001501:1@s.whatsapp.net'));
    await (onFake.sock as unknown as { retryReceipt(jid: string, id: string): Promise<boolean> }).retryReceipt(
      '60177001501:1@s.whatsapp.net',
      'MSG-BEFORE-RESTART',
    );
    await eventually('each side asked', async () => asked.some((a) => a.side === 'wire') && asked.some((a) => a.side === 'fake'), 10_000, 10);
    const of = (side: string) => asked.filter((a) => a.side === side).map(({ remoteJid, id }) => ({ remoteJid, id }));
    expect(of('fake')).toEqual(of('wire'));
    expect(of('wire')).toEqual([{ remoteJid: '60177001501:1@s.whatsapp.net', id: 'MSG-BEFORE-RESTART' }]);
  } finally {
    onWire.sock.end(undefined);
    onFake.sock.end(undefined);
  }
});
