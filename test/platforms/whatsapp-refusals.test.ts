import { AccountCoolingRepository, LateRefusalRepository, NewChatLimitRepository, type MessagePart } from '@metronome/db';
import { realTimers } from '@metronome/transports';
import { whatsappMessageId, type MessageRefusal } from '@metronome/transports/whatsapp';
import { lateRefusalRecorder } from '../../services/sender/src/late-refusals.js';
import type { SenderEvents } from '../../services/sender/src/sender-events.js';
import { eventually } from '../helpers/test-env.js';
import { startWhatsAppHarness, type WhatsAppHarness } from './whatsapp-setup.js';

// Messages WhatsApp takes and refuses afterwards (a server ERROR ack, Baileys' handleBadAck),
// through the real sender job, transport and socket pool, to a FAKE WhatsApp network.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
const phone = (n: number) => `6011${String(n).padStart(7, '0')}`;

let w: WhatsAppHarness;
let record: ((r: MessageRefusal) => void) | null = null;
/** what the recorder told (the sender's event bus: metrics and log lines) */
const emitted: { name: string; e: unknown }[] = [];
afterEach(() => void (emitted.length = 0));
beforeAll(async () => {
  let newChats: NewChatLimitRepository | undefined;
  w = await startWhatsAppHarness(
    {},
    {},
    {
      onMessageRefused: (r) => record?.(r),
      newChats: {
        read: (a) => newChats!.read(a),
        refused: (a, at) => newChats!.refused(a, at),
        reachoutLock: (a, l, n) => newChats!.reachoutLock(a, l, n),
        cap: (a, c) => newChats!.cap(a, c),
      },
    },
  );
  newChats = new NewChatLimitRepository(w.h.tdb.db);
  record = lateRefusalRecorder({
    refusals: new LateRefusalRepository(w.h.tdb.db),
    clock: w.h.clock,
    timers: realTimers,
    events: { emit: (name: string, e: unknown) => void emitted.push({ name, e }) } as unknown as SenderEvents,
    retryMs: 50,
    retries: 100,
  });
});
afterAll(async () => {
  await w.close();
});

const account = async (id: string) =>
  w.h.tdb.db.selectFrom('accounts').select(['status', 'cooling_reason', 'cooling_until']).where('id', '=', id).executeTakeFirstOrThrow();
const targets = async (runId: string) =>
  Object.fromEntries(
    (await w.h.tdb.db.selectFrom('run_targets').select(['chat_id', 'status', 'error_code']).where('run_id', '=', runId).execute()).map((t) => [t.chat_id, t]),
  );

/** Runs the run's jobs, as workers would, until `done` or `max` jobs. */
async function jobs(runId: string, max: number, done: () => Promise<boolean> = async () => false): Promise<void> {
  for (let i = 0; i < max && !(await done()); i++) {
    await w.h.runJob(runId);
    const run = await w.h.run(runId);
    if (run.status !== 'queued' && run.status !== 'running') return;
    const job = await w.h.deps.queue.queue.getJob(run.job_id!);
    w.h.clock.advance(job?.opts.delay ?? 0);
  }
}

test("463 on a new chat after the write: that target fails, the account's other new chats wait (it stays active) until an operator lifts the hold", async () => {
  const { tenantId, accountId } = await w.seedPairedAccount({ maxSendPerMinute: 60_000, groupConcurrency: 1 });
  const chats = Array.from({ length: 100 }, (_, i) => phone(i));
  const refused = new Set([40, 50, 60, 70, 80].map((i) => `${phone(i)}@s.whatsapp.net`));
  w.network.answers.refuseAfterWrite(accountId, { code: 463, when: ({ jid }) => refused.has(jid) });
  const runId = await w.h.seedRun({ tenantId, accountId, targets: chats, parts: [text('hello')] });
  const held = async () => Object.values(await targets(runId)).filter((t) => t.error_code === 'new_chats_refused').length > 0;

  await jobs(runId, 100, held);
  const mine = () => w.network.messages.filter((m) => m.accountId === accountId);
  expect(await account(accountId)).toEqual({ status: 'active', cooling_reason: null, cooling_until: null });
  expect(w.network.answers.ackErrors.filter((e) => e.accountId === accountId)).toHaveLength(1);
  const first = mine().findIndex((m) => refused.has(m.jid));
  expect(first).toBe(40);
  // within one send of the first refusal (the chats here carry no privacy token: all are new)
  expect(mine().length - (first + 1)).toBeLessThanOrEqual(1);
  const firstChat = phone(40);
  await eventually('the refused target failed', async () => (await targets(runId))[firstChat]?.status === 'failed', 10_000, 50);
  expect((await targets(runId))[firstChat]).toMatchObject({ status: 'failed', error_code: 'new_chat_refused' });

  // no automatic end: however long it waits, nothing more goes out
  const before = mine().length;
  for (let i = 0; i < 5; i++) {
    w.h.clock.advance(24 * 3_600_000);
    await w.h.runJob(runId);
  }
  expect(mine()).toHaveLength(before);
  const counts = await w.h.tdb.db.selectFrom('run_targets').select(['status']).where('run_id', '=', runId).where('status', '=', 'failed').execute();
  expect(counts).toHaveLength(1);

  // an operator lifts it: the rest go out (the other refusals are WhatsApp's to make again)
  w.network.answers.refuseAfterWrite(accountId, { code: 463, when: () => false });
  expect(await new AccountCoolingRepository(w.h.tdb.db).lift(accountId, null, new Date(w.h.clock.now()))).toBe(true);
  w.h.clock.advance(24 * 3_600_000);
  await jobs(runId, 200);
  expect(new Set(mine().map((m) => m.messageId)).size).toBe(mine().length);
  expect(mine().map((m) => m.messageId)).toContain(whatsappMessageId(`${runId}:${phone(99)}:0`));
});

test('479 after the write fails that chat with its code; the account goes on', async () => {
  const { tenantId, accountId } = await w.seedPairedAccount({ maxSendPerMinute: 60_000, groupConcurrency: 1 });
  const chats = Array.from({ length: 5 }, (_, i) => phone(200 + i));
  w.network.answers.refuseAfterWrite(accountId, { code: 479, when: ({ jid }) => jid === `${phone(202)}@s.whatsapp.net` });
  const runId = await w.h.seedRun({ tenantId, accountId, targets: chats, parts: [text('hello')] });
  await jobs(runId, 50);
  await eventually('the refused target failed', async () => (await targets(runId))[phone(202)]?.status === 'failed', 10_000, 50);
  const t = await targets(runId);
  expect(t[phone(202)]).toMatchObject({ status: 'failed', error_code: 'message_invalid' });
  expect(Object.values(t).filter((x) => x.status === 'sent')).toHaveLength(4);
  expect((await account(accountId)).status).toBe('active');
});

test('a reachoutTimeLock holds sends to new chats until it ends', async () => {
  const { tenantId, accountId } = await w.seedPairedAccount({ maxSendPerMinute: 60_000, groupConcurrency: 1 });
  const first = await w.h.seedRun({ tenantId, accountId, targets: [phone(300)], parts: [text('hi')] });
  await jobs(first, 20);
  const until = w.h.clock.now() + 3_600_000;
  w.network.answers.lockReachout(accountId, until, (u) => w.network.openSocket(accountId)!.serverEvent('connection.update', u as never));
  await eventually('the lock recorded', async () => (await new NewChatLimitRepository(w.h.tdb.db).read(accountId))?.reachoutLock !== null, 5_000, 10);
  const runId = await w.h.seedRun({ tenantId, accountId, targets: [phone(301)], parts: [text('again')] });
  await w.h.runJob(runId);
  expect((await targets(runId))[phone(301)]).toMatchObject({ status: 'pending', error_code: 'reachout_time_lock' });
  expect(w.network.messagesTo(`${phone(301)}@s.whatsapp.net`)).toHaveLength(0);
  expect(w.network.answers.ackErrors.filter((e) => e.accountId === accountId)).toHaveLength(0);
  w.h.clock.set(until + 1);
  await jobs(runId, 20);
  expect((await targets(runId))[phone(301)]!.status).toBe('sent');
});

test('405 on connect: the account is unavailable as client_outdated after one attempt, its run paused, no retry loop', async () => {
  const { tenantId, accountId } = await w.seedPairedAccount({ maxSendPerMinute: 60_000 });
  w.network.answers.refuseConnect(accountId, 405);
  const runId = await w.h.seedRun({ tenantId, accountId, targets: [phone(400), phone(401)], parts: [text('hello')] });
  await jobs(runId, 20);
  expect((await account(accountId)).status).toBe('disconnected');
  const run = await w.h.run(runId);
  expect(run).toMatchObject({ status: 'paused', paused_reason: 'account_unavailable' });
  expect(run.error_summary).toContain('client_outdated');
  expect(run.error_summary).toContain('WHATSAPP_VERSION');
  expect(w.network.answers.connectAttempts.filter((a) => a.accountId === accountId)).toHaveLength(1);
  expect(Object.values(await targets(runId)).map((t) => t.status)).toEqual(['pending', 'pending']);
});
