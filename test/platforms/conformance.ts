import type { MessagePart } from '@metronome/db';
import { imageBytes } from '../helpers/fake-telegram-files.js';
import { driveRun, type SenderHarness } from '../helpers/sender-harness.js';

export interface ConformanceAccount {
  tenantId: string;
  accountId: string;
  /** the platform's name for the account (an externalId, a bot token...), for the helpers below */
  handle: string;
}

export interface DeliveredMessage {
  chatId: string;
  text: string | null;
  receivedAt: number;
  upload?: boolean;
}

export interface ConformancePlatform {
  harness: SenderHarness;
  chatId(i: number): string;
  seedAccount(opts?: { groupConcurrency?: number; maxSendPerMinute?: number }): Promise<ConformanceAccount>;
  delivered(account: ConformanceAccount): Promise<DeliveredMessage[]>;
  uploads(account: ConformanceAccount): Promise<number>;
  injectAccountWait(account: ConformanceAccount, seconds: number): Promise<void>;
  injectChatWait(account: ConformanceAccount, chatId: string, seconds: number): Promise<void>;
  close(): Promise<void>;
}

const text = (t: string): MessagePart => ({ type: 'text', text: t });

function byChat(messages: DeliveredMessage[]): Map<string, DeliveredMessage[]> {
  const map = new Map<string, DeliveredMessage[]>();
  for (const m of messages) map.set(m.chatId, [...(map.get(m.chatId) ?? []), m]);
  return map;
}

export function describeTransportConformance(name: string, setup: () => Promise<ConformancePlatform>): void {
  describe(`${name} transport conformance`, () => {
    let p: ConformancePlatform;
    beforeAll(async () => {
      p = await setup();
    });
    afterAll(async () => {
      await p?.close();
    });

    test('every part reaches every chat exactly once, in order', async () => {
      const h = p.harness;
      const account = await p.seedAccount({ groupConcurrency: 3 });
      const chats = Array.from({ length: 6 }, (_, i) => p.chatId(i));
      const runId = await h.seedRun({
        tenantId: account.tenantId,
        accountId: account.accountId,
        targets: chats,
        parts: [text('one'), text('two'), text('three')],
      });
      await driveRun(h, runId);
      expect((await h.run(runId)).status).toBe('success');
      const received = byChat(await p.delivered(account));
      expect([...received.keys()].sort()).toEqual([...chats].sort());
      for (const chat of chats) {
        const mine = received.get(chat)!;
        expect(mine.map((m) => m.text)).toEqual(['one', 'two', 'three']);
        const times = mine.map((m) => m.receivedAt);
        expect(times).toEqual([...times].sort((a, b) => a - b));
      }
      for (const t of await h.targets(runId)) expect(t).toMatchObject({ status: 'sent', parts_sent: 3 });
    });

    test('a media is uploaded once per account, whatever the number of chats and runs', async () => {
      const h = p.harness;
      const account = await p.seedAccount({ groupConcurrency: 3 });
      const mediaId = await h.seedMedia(
        account.tenantId,
        Buffer.concat([imageBytes('png', 24) /* a PNG's head: Telegram reads a photo by its bytes */, Buffer.from(`picture for ${account.accountId}`)]),
        'image/png',
      );
      const parts: MessagePart[] = [{ type: 'media', mediaId, caption: 'look' }, text('after')];
      const chats = Array.from({ length: 5 }, (_, i) => p.chatId(100 + i));
      const first = await h.seedRun({ tenantId: account.tenantId, accountId: account.accountId, targets: chats, parts });
      await driveRun(h, first);
      expect((await h.run(first)).status).toBe('success');
      expect(await p.uploads(account)).toBe(1);
      const second = await h.seedRun({ tenantId: account.tenantId, accountId: account.accountId, targets: chats, parts });
      await driveRun(h, second);
      expect((await h.run(second)).status).toBe('success');
      expect(await p.uploads(account)).toBe(1);
      const received = byChat(await p.delivered(account));
      for (const chat of chats) expect(received.get(chat)!.map((m) => m.text)).toEqual(['look', 'after', 'look', 'after']);
    });

    test('an account-wide wait is honoured: nothing is sent from the account before it ends, and no attempt is spent', async () => {
      const h = p.harness;
      const account = await p.seedAccount({ groupConcurrency: 3 });
      const chats = Array.from({ length: 4 }, (_, i) => p.chatId(200 + i));
      const runId = await h.seedRun({ tenantId: account.tenantId, accountId: account.accountId, targets: chats, parts: [text('a'), text('b')] });
      const t0 = h.clock.now();
      // Longer than a minute: Telegram's 429 does not say whose limit it is, and only a wait
      // that long cannot be a group's own per-minute limit (docs/platforms.md).
      await p.injectAccountWait(account, 90);
      await driveRun(h, runId);
      expect((await h.run(runId)).status).toBe('success');
      const received = await p.delivered(account);
      expect(received).toHaveLength(chats.length * 2);
      for (const m of received) expect(m.receivedAt).toBeGreaterThanOrEqual(t0 + 90_000);
      const row = await h.tdb.db.selectFrom('accounts').select('blocked_until').where('id', '=', account.accountId).executeTakeFirstOrThrow();
      expect(row.blocked_until!.getTime()).toBeGreaterThanOrEqual(t0 + 90_000);
      for (const t of await h.targets(runId)) expect(t).toMatchObject({ status: 'sent', attempts: 1 });
    });

    test("a chat's wait delays that chat only", async () => {
      const h = p.harness;
      const account = await p.seedAccount({ groupConcurrency: 2 });
      const chats = Array.from({ length: 4 }, (_, i) => p.chatId(300 + i));
      const waiting = chats[0]!;
      const runId = await h.seedRun({ tenantId: account.tenantId, accountId: account.accountId, targets: chats, parts: [text('hello')] });
      const t0 = h.clock.now();
      await p.injectChatWait(account, waiting, 20);
      await driveRun(h, runId);
      expect((await h.run(runId)).status).toBe('success');
      const received = byChat(await p.delivered(account));
      expect(received.get(waiting)!).toHaveLength(1);
      expect(received.get(waiting)![0]!.receivedAt).toBeGreaterThanOrEqual(t0 + 20_000);
      for (const chat of chats.slice(1)) {
        expect(received.get(chat)!).toHaveLength(1);
        expect(received.get(chat)![0]!.receivedAt).toBeLessThan(t0 + 20_000);
      }
      const target = (await h.targets(runId)).find((t) => t.chat_id === waiting)!;
      expect(target).toMatchObject({ status: 'sent', attempts: 1 });
    });
  });
}
