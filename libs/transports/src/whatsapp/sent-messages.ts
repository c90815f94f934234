import type { Clock } from '@metronome/core';
import { proto } from '@whiskeysockets/baileys';
import type { WhatsAppLogger } from './socket.js';

/** Where sent messages are kept for days (libs/db `WhatsAppSentMessageRepository`), so any replica can answer a retry. */
export interface SentMessageStore {
  remember(accountId: string, messageId: string, message: Buffer, sentAt: Date): Promise<void>;
  find(accountId: string, messageId: string, since: Date): Promise<Buffer | null>;
}

export interface SentMessagesOptions {
  store?: SentMessageStore | undefined;
  clock: Clock;
  logger: WhatsAppLogger;
  keepMs?: number | undefined;
  max?: number;
}

/**
 * Recent messages for Baileys' `getMessage`: a device that could not decrypt one asks again, and without it the chat shows
 * "waiting for this message" forever. In memory, and in the store for `keepMs` on any replica; found by id alone.
 */
export class SentMessages {
  private readonly messages = new Map<string, proto.IMessage>();
  private readonly writes = new Set<Promise<void>>();
  private readonly max: number;
  private readonly keepMs: number;

  constructor(private readonly o: SentMessagesOptions) {
    this.max = o.max ?? 5_000;
    this.keepMs = o.keepMs ?? 7 * 86_400_000;
  }

  /** The store's write runs in the background (a failure is logged: the send stands). */
  remember(accountId: string, messageId: string, message: proto.IMessage): void {
    const key = `${accountId}:${messageId}`;
    this.messages.delete(key);
    this.messages.set(key, message);
    if (this.messages.size > this.max) this.messages.delete(this.messages.keys().next().value!);
    const store = this.o.store;
    if (!store) return;
    const write = store
      .remember(accountId, messageId, Buffer.from(proto.Message.encode(message).finish()), new Date(this.o.clock.now()))
      .catch((err: unknown) => this.o.logger.warn({ err, accountId, messageId }, 'whatsapp sent message not kept for re-sends'))
      .finally(() => this.writes.delete(write));
    this.writes.add(write);
  }

  async get(accountId: string, messageId: string): Promise<proto.IMessage | undefined> {
    const recent = this.messages.get(`${accountId}:${messageId}`);
    if (recent || !this.o.store) return recent;
    const stored = await this.o.store.find(accountId, messageId, new Date(this.o.clock.now() - this.keepMs));
    return stored ? proto.Message.decode(stored) : undefined;
  }

  async flush(): Promise<void> {
    await Promise.all([...this.writes]);
  }
}
