import { driveRun as drive, startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { JobWrites } from '../../services/sender/src/writes.js';

// Per-chat pace (platforms such as Telegram limit each group as well as the account) and the
// jitter between the parts of one chat, on real PostgreSQL, Redis and sandbox, manual clock.

const text = (t: string) => ({ type: 'text' as const, text: t });

interface Msg {
  chatId: string;
  partIndex: number;
  receivedAt: number;
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

/** The harness's first request leaves `lateMs` after its slot: the transport's send takes that much of the manual clock before it writes. */
function firstRequestLate(h: SenderHarness, lateMs: number): void {
  const transport = h.deps.transports['http']!;
  const send = transport.send.bind(transport);
  let sends = 0;
  transport.send = async (...args) => {
    if (sends++ === 0) h.clock.advance(lateMs);
    return send(...args);
  };
}

describe('per-chat pace', () => {
  let h: SenderHarness;
  beforeEach(async () => {
    // 20 a minute per chat: one part every 3 s to the same chat; the account itself is unbounded
    h = await startSenderHarness({ chatPacePerMinute: { http: 20 }, maxInlineWaitMs: 2000 });
  });
  afterEach(async () => {
    await h.close();
  });

  test("spaces each chat's parts by the chat pace", async () => {
    // One lane: on the manual clock a sibling lane's pace sleep moves the shared clock while this
    // lane's request is in flight, so the sandbox would stamp an earlier part late and the gap it
    // sees would shrink by an artefact of the test clock, not of the sender.
    const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 1 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['group-a', 'group-b'], parts: [text('1'), text('2'), text('3')] });
    await drive(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
    for (const chat of ['group-a', 'group-b']) {
      const mine = items.filter((m) => m.chatId === chat);
      expect(mine.map((m) => m.partIndex)).toEqual([0, 1, 2]);
      for (const gap of gaps(mine.map((m) => m.receivedAt))) expect(gap).toBeGreaterThanOrEqual(3000);
    }
    // (that other chats go on meanwhile is the next test: on a manual clock, parallel lanes'
    // sleeps move one shared clock, so side-by-side timing is not measurable here)
  });

  test("a part's request that left late does not bring the chat's next part closer: one chat interval from when it was written", async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 1 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['group-a'], parts: [text('1'), text('2')] });
    // the first part's request leaves 1.2 s after its chat slot (a connection awaited, a busy process)
    firstRequestLate(h, 1_200);
    await drive(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
    // the second part's slot is 3 s after the first's slot, but only 1.8 s after its request left
    expect(gaps(items.map((m) => m.receivedAt))).toEqual([3000]);
  });

  test('a chat still inside its pace goes back to pending for that chat only, without an attempt', async () => {
    const { tenantId, accountId } = await h.seedAccount({ groupConcurrency: 1 });
    const first = await h.seedRun({ tenantId, accountId, targets: ['group-a'], parts: [text('earlier')] });
    await drive(h, first);
    const t = h.clock.now();
    const second = await h.seedRun({ tenantId, accountId, targets: ['group-a', 'group-b'], parts: [text('now')] });
    await h.runJob(second);
    const targets = await h.targets(second);
    const a = targets.find((x) => x.chat_id === 'group-a')!;
    const b = targets.find((x) => x.chat_id === 'group-b')!;
    expect(b.status).toBe('sent');
    expect(a.status).toBe('pending');
    expect(a.attempts).toBe(0);
    // due when the chat's slot comes (3 s after its last send), not later, not sooner
    expect(a.next_attempt_at.getTime()).toBeGreaterThan(t);
    expect(a.next_attempt_at.getTime()).toBeLessThanOrEqual(t + 3000);
    await drive(h, second);
    expect((await h.run(second)).status).toBe('success');
  });
});

describe('jitter between the parts of one chat', () => {
  test('adds random() × PART_JITTER_MS between parts, never before a first part', async () => {
    // the harness's random() is 0.5: 400 ms between parts, with an unbounded pace
    const h = await startSenderHarness({ partJitterMs: 800 });
    try {
      const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 1 });
      const start = h.clock.now();
      const runId = await h.seedRun({ tenantId, accountId, targets: ['a'], parts: [text('1'), text('2'), text('3')] });
      await drive(h, runId);
      const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
      expect(items[0]!.receivedAt).toBe(start);
      expect(gaps(items.map((m) => m.receivedAt))).toEqual([400, 400]);
    } finally {
      await h.close();
    }
  });
  test('each gap is a draw of its own: a jitter stuck at one value (or at 0) would not spread them', async () => {
    const h = await startSenderHarness({ partJitterMs: 800 });
    const draws = [0.25, 0.75];
    h.deps.random = () => draws.shift() ?? 0.5;
    try {
      const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 1 });
      const runId = await h.seedRun({ tenantId, accountId, targets: ['a'], parts: [text('1'), text('2'), text('3')] });
      await drive(h, runId);
      const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
      expect(gaps(items.map((m) => m.receivedAt))).toEqual([200, 600]);
    } finally {
      await h.close();
    }
  });
});

describe("the account's pace from one job to the next", () => {
  test("a request that left late holds the account's next job one interval from when it left, though the job's last write failed", async () => {
    const h = await startSenderHarness();
    const close = JobWrites.prototype.close;
    try {
      // 60 a minute: one request a second at the platform
      const { tenantId, accountId, externalId } = await h.seedAccount({ maxSendPerMinute: 60, groupConcurrency: 1 });
      const first = await h.seedRun({ tenantId, accountId, targets: ['a'], parts: [text('1')] });
      const second = await h.seedRun({ tenantId, accountId, targets: ['b'], parts: [text('1')] });
      // the first job's request leaves 600 ms after its slot (a busy process after an outage)...
      firstRequestLate(h, 600);
      // ...and its last write fails (PostgreSQL gone at that moment): the job throws
      JobWrites.prototype.close = async function (this: JobWrites, ...args) {
        JobWrites.prototype.close = close;
        await close.apply(this, args);
        throw new Error('connection terminated');
      };
      await expect(h.runJob(first)).rejects.toThrow('connection terminated');
      await drive(h, second);
      const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
      expect(items.map((m) => m.chatId)).toEqual(['a', 'b']);
      // the second slot is 1,020 ms after the first (reserved 2 % slower), 420 ms after the late request
      expect(gaps(items.map((m) => m.receivedAt))[0]).toBeGreaterThanOrEqual(1_000);
    } finally {
      JobWrites.prototype.close = close;
      await h.close();
    }
  });
});
