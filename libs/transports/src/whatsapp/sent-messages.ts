import type { Clock } from '@metronome/core';
import { proto } from '@whiskeysockets/baileys';
import type { WhatsAppLogger } from './socket.js';

/**
 * Where sent messages are kept for days (PostgreSQL: `WhatsAppSentMessageRepository` of
 * @metronome/db satisfies this), so any replica can answer a retry. Bytes only: the
 * protobuf encoding happens here.
 */
export interface SentMessageStore {
  remember(accountId: string, messageId: string, message: Buffer, sentAt: Date): Promise<void>;
  find(accountId: string, messageId: string, since: Date): Promise<Buffer | null>;
}

export interface SentMessagesOptions {
  /** absent: this replica's memory only */
  store?: SentMessageStore | undefined;
  clock: Clock;
  logger: WhatsAppLogger;
  /** how long a message can be asked for again (WHATSAPP_RESEND_DAYS), ms */
  keepMs?: number | undefined;
  /** how many recent messages this replica also keeps in memory */
  max?: number;
}

/**
 * The messages sent lately, by account and message id, for Baileys' `getMessage`: a recipient
 * whose device could not decrypt a message asks the sender to encrypt it again, and without the
 * message itself that chat would show "waiting for this message" forever. Recent ones are in
 * memory; every one is also written to the store, which answers for `keepMs` on any replica
 * (the socket may have moved, the phone may come online days later). The id alone finds it:
 * a retry naming the chat by LID finds a message sent to the phone number.
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

  /** Keeps a message just sent; the store's write runs in the background (a failure is logged: the send stands). */
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

  /** The message, from memory or the store while it is kept; undefined when unknown or gone. */
  async get(accountId: string, messageId: string): Promise<proto.IMessage | undefined> {
    const recent = this.messages.get(`${accountId}:${messageId}`);
    if (recent || !this.o.store) return recent;
    const stored = await this.o.store.find(accountId, messageId, new Date(this.o.clock.now() - this.keepMs));
    return stored ? proto.Message.decode(stored) : undefined;
  }

  /** Resolves once every write started so far has ended. */
  async flush(): Promise<void> {
    await Promise.all([...this.writes]);
  }
}
