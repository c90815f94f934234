import { ManualClock } from '@metronome/core';
import { baileysSocketFactory, type WhatsAppSocket } from '@metronome/transports/whatsapp';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { openWhatsAppSocket } from '../helpers/open-whatsapp-socket.js';
import { eventually } from '../helpers/test-env.js';
import { mexNotification, receipt, startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';

// The API-level FAKE WhatsApp (test/helpers/fake-whatsapp-socket.ts) stands where Baileys' socket
// would in the older platform tests. Each behaviour of it that the transport reads is run here
// through it and through the real Baileys socket (the product's factory) against the project's
// wire-level server, and both must give the same events: a fake that disagrees with the library
// fails here. (The wire server itself is pinned in whatsapp-wire-server.test.ts.)

/** What the transport reads of a socket's events, without ids and clocks. */
type Seen =
  | { event: 'upsert'; status: number | null; error: string | null }
  | { event: 'update'; status: number | null; error: string | null }
  | { event: 'lock'; isActive: boolean; endsAt: number | null; type: string | null }
  | { event: 'member'; member: string; read: boolean; delivered: boolean };

function watch(sock: WhatsAppSocket): Seen[] {
  const seen: Seen[] = [];
  sock.ev.on('messages.upsert', ({ messages }) => {
    for (const m of messages)
      if (m.key.fromMe) seen.push({ event: 'upsert', status: m.status ?? null, error: (m.messageStubParameters?.[0] as string | undefined) ?? null });
  });
  sock.ev.on('messages.update', (updates) => {
    for (const { update } of updates)
      if (update.status != null)
        seen.push({ event: 'update', status: update.status, error: (update.messageStubParameters?.[0] as string | undefined) ?? null });
  });
  sock.ev.on('message-receipt.update', (updates) => {
    for (const { receipt } of updates)
      seen.push({ event: 'member', member: receipt.userJid ?? '', read: receipt.readTimestamp != null, delivered: receipt.receiptTimestamp != null });
  });
  sock.ev.on('connection.update', (u) => {
    const l = u.reachoutTimeLock;
    if (l) seen.push({ event: 'lock', isActive: l.isActive === true, endsAt: l.timeEnforcementEnds?.getTime() ?? null, type: l.enforcementType ?? null });
  });
  return seen;
}

let server: WireServer;
const clock = new ManualClock(Date.now());
const network = new FakeWhatsAppNetwork(clock);
let real: WhatsAppSocket;
let fake: WhatsAppSocket;
let realSeen: Seen[];
let fakeSeen: Seen[];
beforeAll(async () => {
  server = await startWireServer();
  real = (await openWhatsAppSocket(baileysSocketFactory, { url: server.url })).sock;
  fake = (await openWhatsAppSocket(network.factory, { accountId: 'pinned' })).sock;
  realSeen = watch(real);
  fakeSeen = watch(fake);
});
afterAll(async () => {
  real?.end(undefined);
  fake?.end(undefined);
  await server?.close();
});
beforeEach(() => {
  realSeen.length = 0;
  fakeSeen.length = 0;
  server.ack = () => null;
  server.ackDelayMs = 0;
});

/** Both sockets' events once each has seen `n`, and a moment more for anything extra (Baileys flushes its buffer 100 ms after a send). */
async function both(n: number): Promise<{ real: Seen[]; fake: Seen[] }> {
  await eventually(`${n} events from each`, async () => realSeen.length >= n && fakeSeen.length >= n, 10_000, 10).catch((e) => {
    throw new Error(`${String(e)}: real ${JSON.stringify(realSeen)}, fake ${JSON.stringify(fakeSeen)}`);
  });
  await new Promise((r) => setTimeout(r, 300));
  return { real: [...realSeen], fake: [...fakeSeen] };
}

test('a text taken: its own upsert, pending, and nothing else', async () => {
  await real.sendMessage('60177000401@s.whatsapp.net', { text: 'hi' });
  await fake.sendMessage('60177000401@s.whatsapp.net', { text: 'hi' }, { messageId: 'PIN1' });
  const seen = await both(1);
  expect(seen.fake).toEqual(seen.real);
  expect(seen.real).toEqual([{ event: 'upsert', status: 1, error: null }]);
});

test('an ERROR ack at once is folded into the upsert; one that comes later is an update', async () => {
  server.ack = () => ({ error: '463' });
  network.answers.refuseAfterWrite('pinned', { code: 463, when: () => true, at: 'once' });
  // at once: within Baileys' buffer of the send's upsert (~100 ms), which this process, server and
  // client both, may miss when the machine is loaded: the real side tried until one lands in it
  for (let attempt = 0; attempt < 5; attempt++) {
    realSeen.length = 0;
    await real.sendMessage(`6017700040${attempt}@s.whatsapp.net`, { text: 'new chat' });
    await eventually('the refusal told', async () => realSeen.some((e) => 'error' in e && e.error === '463'), 5_000, 10);
    await new Promise((r) => setTimeout(r, 300));
    if (realSeen.length === 1) break;
  }
  await fake.sendMessage('60177000402@s.whatsapp.net', { text: 'new chat' }, { messageId: 'PIN2' });
  const once = await both(1);
  expect(once.fake).toEqual(once.real);
  expect(once.real).toEqual([{ event: 'upsert', status: 0, error: '463' }]);

  realSeen.length = 0;
  fakeSeen.length = 0;
  server.ack = () => ({ error: '479' });
  server.ackDelayMs = 500;
  network.answers.refuseAfterWrite('pinned', { code: 479, when: () => true, at: 'later' });
  await real.sendMessage('60177000403@s.whatsapp.net', { text: 'invalid' });
  await fake.sendMessage('60177000403@s.whatsapp.net', { text: 'invalid' }, { messageId: 'PIN3' });
  const later = await both(2);
  expect(later.fake).toEqual(later.real);
  expect(later.real).toEqual([
    { event: 'upsert', status: 1, error: null },
    { event: 'update', status: 0, error: '479' },
  ]);
  network.answers.refuseAfterWrite('pinned', { code: 0, when: () => false });
});

test('the reach-out time lock, pushed by WhatsApp and asked for: the same connection.update', async () => {
  const endsAt = Math.floor(Date.now() / 1000 + 3_600) * 1000;
  await server.push(
    mexNotification('NotificationUserReachoutTimelockUpdate', {
      xwa2_notify_account_reachout_timelock: { is_active: true, time_enforcement_ends: String(endsAt / 1000), enforcement_type: 'DEFAULT' },
    }),
  );
  network.answers.lockReachout('pinned', endsAt, (u) => (fake as unknown as { serverEvent(e: string, a: unknown): void }).serverEvent('connection.update', u));
  const pushed = await both(1);
  expect(pushed.fake).toEqual(pushed.real);
  expect(pushed.real).toEqual([{ event: 'lock', isActive: true, endsAt, type: 'DEFAULT' }]);

  realSeen.length = 0;
  fakeSeen.length = 0;
  server.reachoutLock = { endsAt: new Date(endsAt), type: 'DEFAULT' };
  const answers = [await real.fetchAccountReachoutTimelock(), await fake.fetchAccountReachoutTimelock()];
  expect(answers[1]).toEqual(answers[0]);
  const asked = await both(1);
  expect(asked.fake).toEqual(asked.real);
  server.reachoutLock = null;
});

test('the new-chat cap asked for: the same answer', async () => {
  expect(await fake.fetchNewChatMessageCap()).toEqual(await real.fetchNewChatMessageCap());
});

test("receipts, each after the one before was told: one-to-one as updates (delivered, read), a group's per member", async () => {
  // (receipts that come together are consolidated by Baileys' event buffer, a read over a
  // delivery: the receipts' statement reads a read as a delivery too, libs/db receipt-statement.ts)
  const group = '120363000000000501@g.us';
  const members = ['60177000501@s.whatsapp.net', '60177000502@s.whatsapp.net'];
  server.groups.set(group, members);
  network.addGroup(group, members);
  const direct = await real.sendMessage('60177000500@s.whatsapp.net', { text: 'hi' });
  const inGroup = await real.sendMessage(group, { text: 'hi all' });
  await fake.sendMessage('60177000500@s.whatsapp.net', { text: 'hi' }, { messageId: 'PIN5' });
  await fake.sendMessage(group, { text: 'hi all' }, { messageId: 'PIN6' });
  await both(2);
  const steps: [() => Promise<void>, () => void][] = [
    [
      () => server.push(receipt(direct!.key.id!, '60177000500@s.whatsapp.net')),
      () => network.receipts.direct('pinned', '60177000500@s.whatsapp.net', 'PIN5', 'delivered'),
    ],
    [
      () => server.push(receipt(direct!.key.id!, '60177000500@s.whatsapp.net', 'read')),
      () => network.receipts.direct('pinned', '60177000500@s.whatsapp.net', 'PIN5', 'read'),
    ],
    [
      () => server.push(receipt(inGroup!.key.id!, group, undefined, members[0])),
      () => network.receipts.member('pinned', group, 'PIN6', members[0]!, 'delivered'),
    ],
    [() => server.push(receipt(inGroup!.key.id!, group, 'read', members[1])), () => network.receipts.member('pinned', group, 'PIN6', members[1]!, 'read')],
  ];
  const told: { real: Seen[]; fake: Seen[] }[] = [];
  for (const [onWire, onFake] of steps) {
    realSeen.length = 0;
    fakeSeen.length = 0;
    await onWire();
    onFake();
    told.push(await both(1));
  }
  for (const step of told) expect(step.fake).toEqual(step.real);
  expect(told.map((t) => t.real)).toEqual([
    [{ event: 'update', status: 3, error: null }],
    [{ event: 'update', status: 4, error: null }],
    [{ event: 'member', member: members[0], read: false, delivered: true }],
    [{ event: 'member', member: members[1], read: true, delivered: false }],
  ]);
});
