import type { ReceiptInput, ReceiptOutcome } from '@metronome/db';
import { countReceipts, type Logger, type Metrics } from '@metronome/observability';
import type { IncomingText, MessageReceipt } from '@metronome/transports/whatsapp';

export interface ReceiptWriterDeps {
  repo: {
    record(accountId: string, receipts: ReceiptInput[]): Promise<ReceiptOutcome>;
    reply(accountId: string, chatIds: string[], at: Date, windowMs: number, platform?: string): Promise<number>;
  };
  /** REPLY_WINDOW: a chat's message this long after a send to it is a reply, ms */
  replyWindowMs?: number;
  metrics: Metrics;
  logger: Logger;
  flushEveryMs?: number;
  /** a receipt naming no sent target yet (its send not committed yet) is tried again after this, ms */
  retryMs?: number;
  /** ... this many times, then counted unknown and dropped */
  retries?: number;
  /** the most receipts held; beyond it the oldest are dropped (counted unknown) */
  maxQueued?: number;
}

interface Queued {
  r: MessageReceipt;
  tries: number;
  dueAt: number;
}

/** WhatsApp receipts off the hot path (CONTRACT §3): the socket's listener queues them; a timer writes them in batches per account. */
export class ReceiptWriter {
  private queue: Queued[] = [];
  private readonly timer: NodeJS.Timeout;
  private writing: Promise<void> | null = null;

  constructor(
    private readonly d: ReceiptWriterDeps,
    private readonly now: () => number = Date.now,
  ) {
    for (const status of ['delivered', 'read', 'unknown']) d.metrics.receipts.inc({ platform: 'whatsapp', status }, 0);
    this.timer = setInterval(() => void this.flush(), d.flushEveryMs ?? 250);
    this.timer.unref();
  }

  readonly onReceipt = (r: MessageReceipt): void => {
    if (this.queue.length >= (this.d.maxQueued ?? 100_000)) {
      this.queue.shift();
      this.d.metrics.receipts.inc({ platform: 'whatsapp', status: 'unknown' });
    }
    this.queue.push({ r, tries: 0, dueAt: this.now() });
  };

  /** For the pool's `onIncomingText` (beside opt-outs): a chat that writes within REPLY_WINDOW after a run's send to it replied to that run. `platform`: the account's. */
  readonly onReply = (accountId: string, message: IncomingText, platform = 'whatsapp'): void => {
    const at = new Date(this.now());
    void (async () => {
      const chatIds = message.allChatIds ? await message.allChatIds() : message.chatIds;
      await this.d.repo.reply(accountId, chatIds, at, this.d.replyWindowMs ?? 86_400_000, platform);
    })().catch((err: unknown) => this.d.logger.warn({ err, accountId }, 'reply not recorded'));
  };

  flush(): Promise<void> {
    this.writing ??= this.write().finally(() => (this.writing = null));
    return this.writing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    const now = this.now();
    const due = this.queue.filter((q) => q.dueAt <= now);
    if (due.length === 0) return;
    this.queue = this.queue.filter((q) => q.dueAt > now);
    const byAccount = new Map<string, Queued[]>();
    for (const q of due) byAccount.set(q.r.accountId, [...(byAccount.get(q.r.accountId) ?? []), q]);
    for (const [accountId, qs] of byAccount) {
      // A receipt names its chat by every form the target may have used: one input per form.
      const inputs: ReceiptInput[] = [];
      const owner: number[] = [];
      qs.forEach((q, i) => {
        for (const chatId of q.r.chatIds) {
          inputs.push({ messageId: q.r.messageId, chatId, status: q.r.status, at: q.r.at, member: q.r.member ?? null, memberCount: q.r.memberCount ?? null });
          owner.push(i);
        }
      });
      let outcome: ReceiptOutcome;
      try {
        outcome = await this.d.repo.record(accountId, inputs);
      } catch (err) {
        this.d.logger.warn({ err, accountId, receipts: qs.length }, 'receipts not written: tried again');
        this.again(qs, now);
        continue;
      }
      const matched = qs.map(() => false);
      outcome.matched.forEach((m, j) => m && (matched[owner[j]!] = true));
      const final = qs.filter((q, i) => matched[i] || q.tries >= (this.d.retries ?? 5));
      this.again(
        qs.filter((q, i) => !matched[i] && q.tries < (this.d.retries ?? 5)),
        now,
      );
      countReceipts(this.d.metrics, 'whatsapp', {
        receipts: final.map((q) => q.r),
        matched: final.map((q) => matched[qs.indexOf(q)]!),
        changed: outcome.changed,
      });
    }
  }

  private again(qs: Queued[], now: number): void {
    for (const q of qs) this.queue.push({ ...q, tries: q.tries + 1, dueAt: now + (this.d.retryMs ?? 2_000) });
  }
}
