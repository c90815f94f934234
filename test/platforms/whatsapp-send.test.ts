import { DEVELOPMENT_SECRETS_KEY } from '@metronome/core';
import type { MessagePart } from '@metronome/db';
import { whatsappMessageId, WhatsAppTransport } from '@metronome/transports/whatsapp';
import type { proto } from '@whiskeysockets/baileys';
import { driveRun } from '../helpers/sender-harness.js';
import { eventually } from '../helpers/test-env.js';
import { makePool, quietLogger, startWhatsAppHarness, type WhatsAppHarness } from './whatsapp-setup.js';

// Sending through the real sender job (real PostgreSQL and Redis, manual clock) and the real
// WhatsApp transport, socket pool and Baileys media code, to a FAKE WhatsApp network.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
const group = (n: number) => `1203630000000${String(n).padStart(5, '0')}@g.us`;

let w: WhatsAppHarness;
beforeAll(async () => {
  // a short send timeout: the fake's "no acknowledgement" case waits for it in real time
  w = await startWhatsAppHarness({ sendTimeoutMs: 300 });
});
afterAll(async () => {
  await w.close();
});

async function account(opts: { groupConcurrency?: number } = {}) {
  return w.seedPairedAccount(opts);
}

function groups(from: number, count: number): string[] {
  const jids = Array.from({ length: count }, (_, i) => group(from + i));
  for (const jid of jids) w.network.addGroup(jid, ['60100000001@s.whatsapp.net', '60100000002@s.whatsapp.net']);
  return jids;
}

const blockedUntil = async (accountId: string) =>
  await w.h.tdb.db.selectFrom('accounts').select(['blocked_until', 'status']).where('id', '=', accountId).executeTakeFirstOrThrow();

test('every part reaches every group once, in order, with deterministic ids; the media is prepared once and the groups looked up once', async () => {
  const { tenantId, accountId } = await account({ groupConcurrency: 3 });
  const chats = groups(1, 4);
  const mediaId = await w.h.seedMedia(tenantId, Buffer.from('a picture, as bytes'), 'image/png');
  const parts: MessagePart[] = [{ type: 'media', mediaId, caption: 'look' }, text('hello')];
  const first = await w.h.seedRun({ tenantId, accountId, targets: chats, parts });
  await driveRun(w.h, first);
  expect((await w.h.run(first)).status).toBe('success');

  const mine = () => w.network.messages.filter((m) => m.accountId === accountId);
  for (const chat of chats) {
    const got = mine().filter((m) => m.jid === chat);
    expect(got.map((m) => m.messageId)).toEqual([whatsappMessageId(`${first}:${chat}:0`), whatsappMessageId(`${first}:${chat}:1`)]);
    const media = got[0]!.content as proto.IMessage;
    expect(media.imageMessage?.caption).toBe('look');
    expect(media.imageMessage?.mimetype).toBe('image/png');
    expect(got[1]!.content).toEqual({ text: 'hello' });
  }
  // prepared once (one upload), and every group got that same upload
  expect(w.network.uploads.filter((u) => u.accountId === accountId)).toHaveLength(1);
  const media = mine()
    .filter((m) => 'imageMessage' in m.content)
    .map((m) => (m.content as proto.IMessage).imageMessage!);
  expect(new Set(media.map((m) => m.directPath)).size).toBe(1);
  expect(new Set(media.map((m) => Buffer.from(m.mediaKey!).toString('hex'))).size).toBe(1);
  expect(w.network.groupLookups.filter((l) => l.accountId === accountId)).toHaveLength(4);

  const second = await w.h.seedRun({ tenantId, accountId, targets: chats, parts });
  await driveRun(w.h, second);
  expect((await w.h.run(second)).status).toBe('success');
  expect(mine()).toHaveLength(16);
  expect(new Set(mine().map((m) => m.messageId)).size).toBe(16);
  // neither uploaded again nor looked up again: the cache answered for every group
  expect(w.network.uploads.filter((u) => u.accountId === accountId)).toHaveLength(1);
  expect(w.network.groupLookups.filter((l) => l.accountId === accountId)).toHaveLength(4);
  // one socket for both runs, all jobs
  expect(w.network.sockets.filter((s) => s.accountId === accountId)).toHaveLength(1);
});

test('rate-overlimit backs the account off for longer each time it repeats; a delivery resets the backoff', async () => {
  const { tenantId, accountId } = await account({ groupConcurrency: 1 });
  const [chat] = groups(100, 1);
  const runId = await w.h.seedRun({ tenantId, accountId, targets: [chat!], parts: [text('hi')] });

  const waits: number[] = [];
  for (let i = 0; i < 3; i++) {
    w.network.failNext(accountId, 'rate-overlimit');
    const t = w.h.clock.now();
    expect(await w.h.runJob(runId)).toBe('deferred');
    const row = await blockedUntil(accountId);
    waits.push(row.blocked_until!.getTime() - t);
    const [target] = await w.h.targets(runId);
    // a provider wait is not an attempt
    expect(target).toMatchObject({ status: 'pending', attempts: 0, error_code: 'rate_overlimit' });
    w.h.clock.set(row.blocked_until!.getTime());
  }
  expect(waits).toEqual([60_000, 120_000, 240_000]);
  await driveRun(w.h, runId);
  expect((await w.h.run(runId)).status).toBe('success');
  expect(w.network.messagesTo(chat!)).toHaveLength(1);

  // after that delivery, the next overlimit starts from the first step again
  const next = await w.h.seedRun({ tenantId, accountId, targets: [chat!], parts: [text('again')] });
  w.network.failNext(accountId, 'rate-overlimit');
  const t = w.h.clock.now();
  await w.h.runJob(next);
  // (the account's pace may move the manual clock by a millisecond before the send)
  const wait = (await blockedUntil(accountId)).blocked_until!.getTime() - t;
  expect(wait).toBeGreaterThanOrEqual(60_000);
  expect(wait).toBeLessThan(61_000);
});

test('logged out: the account is disconnected and its run paused as account_unavailable, nothing lost', async () => {
  const { tenantId, accountId } = await account({ groupConcurrency: 1 });
  const chats = groups(200, 3);
  const warmup = await w.h.seedRun({ tenantId, accountId, targets: [chats[0]!], parts: [text('before')] });
  await driveRun(w.h, warmup);
  w.network.failNext(accountId, 'logged-out');
  const runId = await w.h.seedRun({ tenantId, accountId, targets: chats, parts: [text('one'), text('two')] });
  expect(await w.h.runJob(runId)).toBe('no-account');
  expect((await blockedUntil(accountId)).status).toBe('disconnected');
  expect(await w.h.run(runId)).toMatchObject({ status: 'paused', paused_reason: 'account_unavailable' });
  expect((await w.h.run(runId)).error_summary).toBe(
    `WhatsApp account disconnected (logged_out): pair it again (POST /v1/accounts/${accountId}/pair), then resume.`,
  );
  for (const t of await w.h.targets(runId)) expect(t).toMatchObject({ status: 'pending', parts_sent: 0 });
  expect(w.pool.isOpen(accountId)).toBe(false);
  expect(w.network.messages.filter((m) => m.accountId === accountId).map((m) => m.content)).toEqual([{ text: 'before' }]);
});

test('an account that was never paired pauses its run instead of showing a QR code', async () => {
  const { tenantId, accountId } = await w.h.seedAccount({ platform: 'whatsapp' });
  const runId = await w.h.seedRun({ tenantId, accountId, targets: groups(300, 1), parts: [text('x')] });
  expect(await w.h.runJob(runId)).toBe('no-account');
  expect(await w.h.run(runId)).toMatchObject({ status: 'paused', paused_reason: 'account_unavailable' });
  expect(w.network.sockets.filter((s) => s.accountId === accountId)).toHaveLength(0);
});

test('a closed connection is retried: the socket reconnects and the part goes out once', async () => {
  const { tenantId, accountId } = await account({ groupConcurrency: 1 });
  const [chat] = groups(400, 1);
  const runId = await w.h.seedRun({ tenantId, accountId, targets: [chat!], parts: [text('retry me')] });
  w.network.failNext(accountId, 'connection-closed');
  await w.h.runJob(runId);
  const [target] = await w.h.targets(runId);
  expect(target).toMatchObject({ status: 'pending', attempts: 1, error_code: 'connection_closed' });
  await driveRun(w.h, runId);
  expect((await w.h.run(runId)).status).toBe('success');
  expect(w.network.messagesTo(chat!).map((m) => m.messageId)).toEqual([whatsappMessageId(`${runId}:${chat}:0`)]);
  expect(w.network.sockets.filter((s) => s.accountId === accountId)).toHaveLength(2);
});

test('no acknowledgement after the hand-over: the target is unknown and never sent again', async () => {
  const { tenantId, accountId } = await account({ groupConcurrency: 1 });
  const chats = groups(500, 1);
  await driveRun(w.h, await w.h.seedRun({ tenantId, accountId, targets: [chats[0]!], parts: [text('earlier')] }));
  w.network.failNext(accountId, 'timeout-after-handover');
  const runId = await w.h.seedRun({ tenantId, accountId, targets: [chats[0]!], parts: [text('maybe')] });
  await driveRun(w.h, runId);
  const [target] = await w.h.targets(runId);
  expect(target).toMatchObject({ status: 'unknown', error_code: 'timeout' });
  // the server got it once (its acknowledgement was lost), and nothing re-sent it
  expect(w.network.messagesTo(chats[0]!).map((m) => m.messageId)).toEqual([expect.any(String), whatsappMessageId(`${runId}:${chats[0]}:0`)]);
});

test('chats WhatsApp cannot reach fail alone; the others are delivered', async () => {
  const { tenantId, accountId } = await account({ groupConcurrency: 1 });
  const [known] = groups(600, 1);
  const unknownGroup = group(699);
  const runId = await w.h.seedRun({ tenantId, accountId, targets: [known!, unknownGroup, 'not-a-chat'], parts: [text('hello')] });
  await driveRun(w.h, runId);
  const targets = Object.fromEntries((await w.h.targets(runId)).map((t) => [t.chat_id, t]));
  expect(targets[known!]).toMatchObject({ status: 'sent' });
  expect(targets[unknownGroup]).toMatchObject({ status: 'failed', error_code: 'chat_not_found' });
  expect(targets['not-a-chat']).toMatchObject({ status: 'failed', error_code: 'chat_not_found' });
  expect((await w.h.run(runId)).status).toBe('partial');
});

test("a job on another replica waits for the account's socket to be handed over: re-delayed, not failed", async () => {
  const { tenantId, accountId } = await account({ groupConcurrency: 1 });
  const [chat] = groups(700, 1);
  // this replica's pool opens the account's socket and keeps it
  await driveRun(w.h, await w.h.seedRun({ tenantId, accountId, targets: [chat!], parts: [text('from replica a')] }));
  expect(w.pool.isOpen(accountId)).toBe(true);

  const replicaB = new WhatsAppTransport({
    // asks for the socket at once (the patience before asking is the next test)
    pool: makePool(w.network, w.leases, w.auth, [DEVELOPMENT_SECRETS_KEY], w.h.clock, { handoverPatienceMs: 0 }),
    clock: w.h.clock,
    logger: quietLogger,
    timeoutMs: 300,
  });
  const runId = await w.h.seedRun({ tenantId, accountId, targets: [chat!], parts: [text('from replica b')] });
  w.h.deps.transports['whatsapp'] = replicaB;
  try {
    expect(await w.h.runJob(runId)).toBe('deferred');
    const [target] = await w.h.targets(runId);
    expect(target).toMatchObject({ status: 'pending', attempts: 0, error_code: 'socket_handover' });
    await eventually('replica a handed the socket over', async () => !w.pool.isOpen(accountId), 5_000, 10);
    await driveRun(w.h, runId);
    expect((await w.h.run(runId)).status).toBe('success');
  } finally {
    w.h.deps.transports['whatsapp'] = w.transport;
    await replicaB.close();
  }
  const sockets = w.network.sockets.filter((s) => s.accountId === accountId);
  expect(sockets).toHaveLength(2);
  expect(w.network.messagesTo(chat!).map((m) => [m.socketId, (m.content as { text: string }).text])).toEqual([
    [sockets[0]!.id, 'from replica a'],
    [sockets[1]!.id, 'from replica b'],
  ]);
  expect(w.network.maxOpenAtOnce(accountId)).toBe(1);
  expect(w.network.replacements).toEqual([]);
});

test("a job on a replica without the account's socket is left to the socket's holder, and only asks for the socket once patience runs out", async () => {
  const { tenantId, accountId } = await account();
  const chats = groups(800, 1);
  // another replica has the account's socket open (its pool shares the lease and the network)
  const other = makePool(w.network, w.leases, w.auth, [DEVELOPMENT_SECRETS_KEY], w.h.clock);
  try {
    expect((await other.use(accountId, async () => 'opened')).ok).toBe(true);
    const runId = await w.h.seedRun({ tenantId, accountId, targets: chats, parts: [text('hi')] });

    // Left to the holder: re-delayed, nothing claimed or counted, no account wait, no hand-over asked.
    expect(await w.h.runJob(runId)).toBe('lock-busy');
    const [target] = await w.h.targets(runId);
    expect(target).toMatchObject({ status: 'pending', attempts: 0 });
    expect((await blockedUntil(accountId)).blocked_until).toBeNull();
    expect(await w.h.redis.get(w.keys.socketHandover(accountId))).toBeNull();
    expect(other.isOpen(accountId)).toBe(true);
    const job = await w.h.deps.queue.queue.getJob((await w.h.run(runId)).job_id!);
    expect(job!.opts.delay).toBeGreaterThanOrEqual(500);
    expect(job!.opts.delay).toBeLessThanOrEqual(750);

    // A gap between two left jobs (the holder served the account meanwhile) starts patience again: left for 10 s more.
    w.h.clock.advance(5_000);
    for (let t = 0; t < 9_400; t += 600) {
      expect(await w.h.runJob(runId)).toBe('lock-busy');
      w.h.clock.advance(600);
    }
    expect(await w.h.redis.get(w.keys.socketHandover(accountId))).toBeNull();

    // Back to back for the whole patience: this replica asks, the holder hands over, the run is sent from here.
    w.h.clock.advance(600);
    await driveRun(w.h, runId);
    expect((await w.h.run(runId)).status).toBe('success');
    expect(w.pool.isOpen(accountId)).toBe(true);
    expect(other.isOpen(accountId)).toBe(false);
    expect(w.network.maxOpenAtOnce(accountId)).toBe(1);
    expect(w.network.replacements.filter((r) => r.accountId === accountId)).toEqual([]);
  } finally {
    await other.close();
  }
});

test('a recipient that asks for a message again (decryption retry) gets it again, same id, text and media alike', async () => {
  const { tenantId, accountId } = await account();
  const [chat] = groups(900, 1);
  const mediaId = await w.h.seedMedia(tenantId, Buffer.from('a picture for a retry'), 'image/png');
  const runId = await w.h.seedRun({ tenantId, accountId, targets: [chat!], parts: [text('hello again'), { type: 'media', mediaId, caption: 'see' }] });
  await driveRun(w.h, runId);
  expect((await w.h.run(runId)).status).toBe('success');
  const [first, second] = w.network.messagesTo(chat!).filter((m) => m.accountId === accountId);
  expect([first, second].every(Boolean)).toBe(true);
  const socket = w.network.openSocket(accountId)!;
  expect(await socket.retryReceipt(chat!, first!.messageId)).toBe(true);
  expect(await socket.retryReceipt(chat!, second!.messageId)).toBe(true);
  const [textRetry, mediaRetry] = w.network.retries.filter((r) => r.accountId === accountId);
  expect(textRetry!.resent).toMatchObject({ conversation: 'hello again' });
  expect(mediaRetry!.resent?.imageMessage?.caption).toBe('see');
  expect(mediaRetry!.resent?.imageMessage?.url).toBe((second!.content as { imageMessage: { url: string } }).imageMessage.url);
  // a message this replica never sent is not made up
  expect(await socket.retryReceipt(chat!, '3EB0000000000000000000')).toBe(false);
});
