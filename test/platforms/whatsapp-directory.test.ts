import { randomBytes } from 'node:crypto';
import { cannotSendReasonOf, ManualClock } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { createRedis } from '@metronome/redis';
import type { TransportAccount } from '@metronome/transports';
import { WhatsAppTransport, type WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { ManualTimers } from '../helpers/manual-timers.js';
import { RecordingDirectorySink } from '../helpers/recording-directory-sink.js';
import { createTestDatabase, eventually, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';
import { insertWhatsAppAccount, makePool, quietLogger, seedPairedAuth, socketLeases } from './whatsapp-setup.js';

// The WhatsApp side of the chat directory, against a FAKE WhatsApp holding 1,000 groups of the
// account: one listing call, events kept without another, rate-overlimit backed off on a manual
// clock while sends go on, one-to-one chats from sends and incoming messages. The sink is a
// RECORDING sink (the calls the transport made), not the PostgreSQL directory.

const KEYS = [randomBytes(32)];
const START = Date.parse('2026-06-01T09:00:00Z');
let tdb: TestDatabase;
let redis: Redis;
let auth: WhatsAppAuthRepository;
let clock: ManualClock;
let timers: ManualTimers;
let network: FakeWhatsAppNetwork;
let sink: RecordingDirectorySink;
let pool: WhatsAppSocketPool;
let transport: WhatsAppTransport;

beforeAll(async () => {
  tdb = await createTestDatabase('wa_directory');
  redis = createRedis(REDIS_URL, 'test-wa-directory');
  auth = new WhatsAppAuthRepository(tdb.db);
});
beforeEach(() => {
  clock = new ManualClock(START);
  timers = new ManualTimers(clock);
  network = new FakeWhatsAppNetwork(clock);
  sink = new RecordingDirectorySink();
  pool = makePool(network, socketLeases(redis, uniquePrefix('wa-dir')), auth, KEYS, clock, { directory: sink, timers });
  transport = new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: 5_000 });
});
afterEach(async () => {
  await transport.close();
});
afterAll(async () => {
  await redis.quit();
  await tdb.drop();
});

async function pairedAccount(): Promise<TransportAccount> {
  const { accountId } = await insertWhatsAppAccount(tdb.db);
  await seedPairedAuth(auth, accountId, KEYS, clock);
  return { id: accountId, externalId: null, credentials: null };
}

let seq = 0;
const text = (chatId: string, body = 'hello') => ({
  chatId,
  part: { type: 'text' as const, text: body },
  partIndex: 0,
  partCount: 1,
  idempotencyKey: `run-${++seq}:${chatId}:0`,
});

/** An account in 1,000 groups, plus announce-only groups: one where it is an admin (LID-addressed, so it is named by its LID alone), one by phone number, one where it is not. */
async function accountIn1000Groups(): Promise<{ account: TransportAccount; groups: string[] }> {
  const account = await pairedAccount();
  const groups = network.groupBook.addMany(account.id, 997);
  network.groupBook.join(account.id, '120363999000000001@g.us', { subject: 'Admins (LID)', announce: true, admin: true, addressing: 'lid' });
  network.groupBook.join(account.id, '120363999000000002@g.us', { subject: 'Admins (PN)', announce: true, admin: true, addressing: 'pn' });
  network.groupBook.join(account.id, '120363999000000003@g.us', { subject: 'Announcements', announce: true, admin: false });
  return { account, groups };
}

test('a sync of 1,000 groups is ONE groupFetchAllParticipating call, written as the complete list of groups', async () => {
  const { account, groups } = await accountIn1000Groups();
  // Two syncs asked at once (and the listing on connect, as the sync opens the socket) make one call.
  await Promise.all([transport.syncDirectory(account, sink), transport.syncDirectory(account, sink)]);

  expect(network.groupFetches).toHaveLength(1);
  const [listing, ...more] = sink.of('replaceAll');
  expect(more).toHaveLength(0);
  expect(listing!.chats).toHaveLength(1_000);
  expect(listing!.scope).toEqual({ kinds: ['group'] });
  expect(listing!.chats.find((c) => c.chatId === groups[0])).toEqual({
    chatId: groups[0],
    title: 'Group 1',
    kind: 'group',
    memberCount: 5,
    canSend: true,
    cannotSendReason: null,
  });
  // Announce mode: an admin may post, in either addressing; a member who is not may not.
  expect(sink.entry(account.id, '120363999000000001@g.us')).toMatchObject({ canSend: true, cannotSendReason: null });
  expect(sink.entry(account.id, '120363999000000002@g.us')).toMatchObject({ canSend: true, cannotSendReason: null });
  expect(sink.entry(account.id, '120363999000000003@g.us')).toMatchObject({ canSend: false, cannotSendReason: 'announce_only' });
  expect(sink.of('syncState').map((c) => c.state)).toEqual([
    { status: 'syncing', synced: 0 },
    { status: 'ok', size: 1_000 },
  ]);
  // Baileys emits the whole listing as groups.update too: not written a second time.
  expect(sink.of('upsert')).toHaveLength(0);

  // A send to a group afterwards uses the open socket: no further listing, and no lookup of the
  // group either (the listing filled the group cache Baileys asks before a group message).
  expect(await transport.send(account, text(groups[1]!))).toMatchObject({ kind: 'delivered' });
  expect(network.groupFetches).toHaveLength(1);
  expect(network.groupLookups).toHaveLength(0);
});

test('renames, announce switches, promotions, a leave, a removal and a new group reach the directory without another listing', async () => {
  const { account, groups } = await accountIn1000Groups();
  await transport.syncDirectory(account, sink);
  const [renamed, announced, left, removed] = groups as [string, string, string, string];

  network.groupBook.rename(renamed, 'Parents, class 3B');
  network.groupBook.setAnnounce(announced, true);
  network.groupBook.leave(account.id, left);
  network.groupBook.remove(account.id, removed);
  network.groupBook.createWith(account.id, '120363999000000009@g.us', 'New group');
  await eventually('every event written', async () => sink.of('patch').length >= 4 && sink.of('upsert').length >= 1, 5_000, 5);

  expect(sink.entry(account.id, renamed)).toMatchObject({ title: 'Parents, class 3B', canSend: true });
  expect(sink.entry(account.id, announced)).toMatchObject({ title: 'Group 2', canSend: false, cannotSendReason: 'announce_only' });
  expect(sink.entry(account.id, left)).toMatchObject({ canSend: false, cannotSendReason: 'left' });
  expect(sink.entry(account.id, removed)).toMatchObject({ canSend: false, cannotSendReason: 'removed' });
  expect(sink.entry(account.id, '120363999000000009@g.us')).toMatchObject({ title: 'New group', kind: 'group', canSend: true });

  // Made an admin of the announce-only group: it may post again; demoted: not.
  network.groupBook.setAdmin(account.id, announced, true);
  await eventually('promotion written', async () => sink.entry(account.id, announced)?.canSend === true, 5_000, 5);
  network.groupBook.setAdmin(account.id, announced, false);
  await eventually('demotion written', async () => sink.entry(account.id, announced)?.canSend === false, 5_000, 5);
  expect(sink.entry(account.id, announced)?.cannotSendReason).toBe('announce_only');

  // Added back to the group it left: that one group is looked up, not the whole list.
  network.groupBook.addBack(account.id, left);
  await eventually('re-added written', async () => sink.entry(account.id, left)?.canSend === true, 5_000, 5);
  expect(sink.entry(account.id, left)).toMatchObject({ title: 'Group 3', cannotSendReason: null });
  expect(network.groupLookups.map((l) => l.jid)).toEqual([left]);

  expect(network.groupFetches).toHaveLength(1);
});

test('a send to a group the account left fails with a code that marks its entry', async () => {
  const { account, groups } = await accountIn1000Groups();
  await transport.syncDirectory(account, sink);
  network.groupBook.leave(account.id, groups[5]!);
  await eventually('leave written', async () => sink.entry(account.id, groups[5]!)?.canSend === false, 5_000, 5);
  const result = await transport.send(account, text(groups[5]!));
  expect(result).toMatchObject({ kind: 'rejected', code: 'forbidden' });
  expect(cannotSendReasonOf((result as { code: string }).code)).toBe('forbidden');
});

test('rate-overlimit backs the listing off (shown with its end), retries at that end on the clock, and never holds a send', async () => {
  const { account, groups } = await accountIn1000Groups();
  network.groupBook.refuseListings(account.id, 2);
  await transport.syncDirectory(account, sink);
  expect(sink.state(account.id)).toEqual({ status: 'backing_off', until: new Date(START + 60_000), reason: expect.stringContaining('rate-overlimit') });
  expect(timers.dueTimes()).toEqual([START + 60_000]);

  // Sends go on during the wait, and a sync asked for meanwhile does not call WhatsApp again.
  expect(await transport.send(account, text(groups[0]!))).toMatchObject({ kind: 'delivered' });
  await transport.syncDirectory(account, sink);
  expect(network.groupFetches).toHaveLength(1);
  expect(sink.state(account.id)).toMatchObject({ status: 'backing_off', until: new Date(START + 60_000) });

  timers.advanceTo(START + 59_999);
  expect(network.groupFetches).toHaveLength(1);
  // At the end of the wait: retried, refused again, and the next wait is longer.
  timers.advanceTo(START + 60_000);
  await eventually('second refusal shown', async () => sink.state(account.id)?.status === 'backing_off' && network.groupFetches.length === 2, 5_000, 5);
  expect(sink.state(account.id)).toMatchObject({ until: new Date(START + 60_000 + 120_000) });
  expect(await transport.send(account, text(groups[1]!))).toMatchObject({ kind: 'delivered' });

  timers.advanceTo(START + 180_000);
  await eventually('listed after the waits', async () => sink.state(account.id)?.status === 'ok', 5_000, 5);
  expect(network.groupFetches).toHaveLength(3);
  expect(sink.of('replaceAll')).toHaveLength(1);
  expect(sink.state(account.id)).toEqual({ status: 'ok', size: 1_000 });
});

test('a send opens the socket and the groups are listed once in the background; a refused listing there fails no send', async () => {
  const account = await pairedAccount();
  network.groupBook.addMany(account.id, 1_000);
  network.groupBook.refuseListings(account.id, 1);
  expect(await transport.send(account, text('60111111111'))).toMatchObject({ kind: 'delivered' });
  await eventually('the refusal shown', async () => sink.state(account.id)?.status === 'backing_off', 5_000, 5);
  expect(network.groupFetches).toHaveLength(1);
  timers.advanceTo(START + 60_000);
  await eventually('listed at the end of the wait', async () => sink.state(account.id)?.status === 'ok', 5_000, 5);
  expect(sink.of('replaceAll')[0]!.chats).toHaveLength(1_000);
  expect(network.groupFetches).toHaveLength(2);
});

test('one-to-one chats appear after a send and after an incoming message, titled by the push name', async () => {
  const account = await pairedAccount();
  expect(await transport.send(account, text('+60111111111'))).toMatchObject({ kind: 'delivered' });
  await eventually('the chat written to', async () => sink.entry(account.id, '60111111111@s.whatsapp.net') !== undefined, 5_000, 5);
  expect(sink.entry(account.id, '60111111111@s.whatsapp.net')).toEqual({
    chatId: '60111111111@s.whatsapp.net',
    title: null,
    kind: 'direct',
    memberCount: null,
    canSend: true,
    cannotSendReason: null,
  });

  // A media goes by relayMessage, which Baileys does not echo as an event: the transport tells the directory itself.
  const media = { mediaId: 'm1', contentType: 'application/pdf', sha256: 'x', filename: 'menu.pdf', bytes: Buffer.from('%PDF-1.4 fake') };
  const prepared = await transport.prepareMedia(account, media);
  if (!prepared.ok) throw new Error('media not prepared');
  const part = { type: 'media' as const, mediaRef: prepared.ref, contentType: media.contentType, filename: media.filename };
  expect(await transport.send(account, { ...text('60155555555'), part })).toMatchObject({ kind: 'delivered' });
  await eventually('the chat sent a media', async () => sink.entry(account.id, '60155555555@s.whatsapp.net') !== undefined, 5_000, 5);

  network.fakeIncomingMessage(account.id, { from: '60122222222@s.whatsapp.net', text: 'hi', pushName: 'Aisha' });
  await eventually('the chat heard from', async () => sink.entry(account.id, '60122222222@s.whatsapp.net') !== undefined, 5_000, 5);
  expect(sink.entry(account.id, '60122222222@s.whatsapp.net')).toMatchObject({ title: 'Aisha', kind: 'direct', canSend: true });
  // Group messages name a group, not a person's chat.
  network.fakeIncomingMessage(account.id, { from: '120363999000000003@g.us', participant: '60133333333@s.whatsapp.net', text: 'hey', pushName: 'Bob' });
  network.fakeIncomingMessage(account.id, { from: '60144444444@s.whatsapp.net', text: 'last' });
  await eventually('the last chat heard from', async () => sink.entry(account.id, '60144444444@s.whatsapp.net') !== undefined, 5_000, 5);
  expect(sink.entry(account.id, '120363999000000003@g.us')).toBeUndefined();
  // The listing of groups leaves them as they are.
  await transport.syncDirectory(account, sink);
  expect(sink.entry(account.id, '60122222222@s.whatsapp.net')).toMatchObject({ title: 'Aisha', canSend: true });
});

test("a sync on a replica that does not hold the account's socket asks for it as a send would, and lists nothing until it has it", async () => {
  const prefix = uniquePrefix('wa-dir-2');
  const sinkA = new RecordingDirectorySink();
  const a = makePool(network, socketLeases(redis, prefix), auth, KEYS, clock, { directory: sinkA, timers });
  const b = makePool(network, socketLeases(redis, prefix), auth, KEYS, clock, { directory: sink, timers });
  try {
    const account = await pairedAccount();
    network.groupBook.addMany(account.id, 10);
    expect((await a.use(account.id, async () => 'opened')).ok).toBe(true);
    await eventually('a listed on connect', async () => sinkA.state(account.id)?.status === 'ok', 5_000, 5);
    await b.directory.sync(account.id, sink);
    expect(sink.state(account.id)).toMatchObject({ status: 'failed', reason: expect.stringContaining('another replica') });
    expect(network.groupFetches).toHaveLength(1);
    // a hands the socket over (as to a send); b's next sync lists on its own socket, never two at once.
    const listed = await eventually(
      'b gets the socket and lists',
      async () => {
        await b.directory.sync(account.id, sink);
        return sink.state(account.id)?.status === 'ok' ? true : null;
      },
      10_000,
      20,
    );
    expect(listed).toBe(true);
    expect(network.maxOpenAtOnce(account.id)).toBe(1);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test('without a directory, the pool sends as before and lists nothing on connect', async () => {
  await transport.close();
  pool = makePool(network, socketLeases(redis, uniquePrefix('wa-dir')), auth, KEYS, clock, { timers });
  transport = new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: 5_000 });
  const account = await pairedAccount();
  network.groupBook.addMany(account.id, 3);
  expect(await transport.send(account, text('60111111111'))).toMatchObject({ kind: 'delivered' });
  network.fakeIncomingMessage(account.id, { from: '60122222222@s.whatsapp.net', text: 'hi' });
  expect(network.groupFetches).toHaveLength(0);
  // A requested sync still lists, into the sink it is given.
  await transport.syncDirectory(account, sink);
  expect(sink.of('replaceAll')[0]!.chats).toHaveLength(3);
});
