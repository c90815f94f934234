import type { Clock } from '@metronome/core';
import { jidDecode, WAMessageStatus, type WAMessageKey } from '@whiskeysockets/baileys';
import { classifyAckError, REPLACED_HOLD_MS, type AckRefusal, type WhatsAppFailure } from './classify.js';
import { bothIdentities, type LidMapping } from './lid-identity.js';
import { chatIdsOf, directReceipt, isOwnJid, memberReceipt, type MessageReceipt } from './message-receipts.js';
import type { WhatsAppSocketEvents } from './socket.js';

// What WhatsApp says of a written message, from ONE `messages.update` listener per socket: ERROR acks and receipts.

export interface MessageRefusal {
  accountId: string;
  messageId: string;
  chatId: string;
  refusal: AckRefusal;
}

type On = <E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void) => void;

const TRACKED_PER_ACCOUNT = 20_000;

export interface ReceiptHooks {
  onReceipt?: (receipt: MessageReceipt) => void;
  memberCount?: (accountId: string, jid: string) => number | null;
  onNewChatRefused?: (accountId: string) => void;
  /** a re-send to one device (after its retry receipt) was refused: the message itself stands */
  onResendRefused?: (refusal: MessageRefusal) => void;
}

interface Written {
  chatId: string;
  resent: boolean;
}

export class MessageStatuses {
  private readonly written = new Map<string, Map<string, Written>>();
  private readonly replacedAt = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly onRefusal: (refusal: MessageRefusal) => void = () => undefined,
    private readonly hooks: ReceiptHooks = {},
  ) {}

  track(accountId: string, messageId: string, chatId: string): void {
    let ids = this.written.get(accountId);
    if (!ids) this.written.set(accountId, (ids = new Map()));
    if (ids.size >= TRACKED_PER_ACCOUNT) ids.delete(ids.keys().next().value!);
    ids.set(messageId, { chatId, resent: false });
  }

  /** A device could not decrypt `messageId` and asked again; an ERROR ack from then is the re-send's, not the message's. */
  resending(accountId: string, messageId: string): void {
    const w = this.written.get(accountId)?.get(messageId);
    if (w) w.resent = true;
  }

  /** `mapping`: the LID mapping, for receipts of messages this replica did not write; `me`: whose devices are no member. */
  follow(
    on: On,
    accountId: string,
    mapping: () => LidMapping | undefined = () => undefined,
    me: () => { id: string; lid?: string } | undefined = () => undefined,
  ): void {
    on('messages.update', (updates) => {
      for (const { key, update } of updates) {
        const receipt = this.hooks.onReceipt && directReceipt(key, update, this.clock.now());
        if (receipt) this.receipt(accountId, key.id!, key.remoteJid ?? '', receipt, undefined, mapping());
        this.errorAck(accountId, key, update);
      }
    });
    // What comes while Baileys buffers events is folded into the message's own upsert (status, receipts); no update follows.
    on('messages.upsert', ({ messages }) => {
      for (const m of messages) {
        this.errorAck(accountId, m.key, m);
        if (!this.hooks.onReceipt || !m.key.id || !this.written.get(accountId)?.has(m.key.id)) continue;
        const direct = directReceipt(m.key, m, this.clock.now());
        if (direct) this.receipt(accountId, m.key.id, m.key.remoteJid ?? '', direct);
        for (const receipt of m.userReceipt ?? []) this.memberReceipt(accountId, m.key, receipt, me);
      }
    });
    on('message-receipt.update', (updates) => {
      for (const { key, receipt } of updates) this.memberReceipt(accountId, key, receipt, me);
    });
  }

  private memberReceipt(
    accountId: string,
    key: WAMessageKey,
    receipt: Parameters<typeof memberReceipt>[1],
    me: () => { id: string; lid?: string } | undefined,
  ): void {
    if (!this.hooks.onReceipt) return;
    const r = memberReceipt(key, receipt, this.clock.now());
    if (!r || !key.remoteJid || isOwnJid(r.member, me())) return;
    this.receipt(accountId, key.id!, key.remoteJid, r, this.hooks.memberCount?.(accountId, key.remoteJid) ?? null);
  }

  private errorAck(accountId: string, key: WAMessageKey, m: { status?: number | null; messageStubParameters?: (string | null)[] | null }): void {
    if (!key.fromMe || !key.id || m.status !== WAMessageStatus.ERROR) return;
    const w = this.written.get(accountId)?.get(key.id);
    if (w === undefined) return;
    const refusal = classifyAckError(Number(m.messageStubParameters?.[0]));
    // a re-send to one device goes to that device's JID (Baileys relayMessage `participant`)
    if (w.resent || jidDecode(key.remoteJid ?? '')?.device) {
      this.hooks.onResendRefused?.({ accountId, messageId: key.id, chatId: w.chatId, refusal });
      return;
    }
    const chatId = w.chatId;
    if (refusal.kind === 'new-chat-refused') this.hooks.onNewChatRefused?.(accountId);
    this.onRefusal({ accountId, messageId: key.id, chatId, refusal });
  }

  /** Another connection of the device took over (440): no new connection for REPLACED_HOLD_MS, or the two would fight. */
  replaced(accountId: string): void {
    this.replacedAt.set(accountId, this.clock.now());
  }

  replacedHold(accountId: string): WhatsAppFailure | null {
    const at = this.replacedAt.get(accountId);
    if (at === undefined) return null;
    if (this.clock.now() - at >= REPLACED_HOLD_MS) {
      this.replacedAt.delete(accountId);
      return null;
    }
    return {
      source: 'connection',
      statusCode: 440,
      message: 'another connection of this WhatsApp device replaced this one (conflict); not taking it back for now',
    };
  }

  /** Names the chat as the send did, or, for a message this replica did not write, by every form the LID mapping knows. */
  private receipt(
    accountId: string,
    messageId: string,
    jid: string,
    r: { status: 'delivered' | 'read'; at: Date; member?: string },
    memberCount?: number | null,
    mapping?: LidMapping,
  ): void {
    const chatId = this.written.get(accountId)?.get(messageId)?.chatId;
    const tell = (chatIds: string[]) => {
      try {
        this.hooks.onReceipt!({ accountId, messageId, chatIds, ...r, ...(r.member !== undefined && { memberCount: memberCount ?? null }) });
      } catch {
        // the listener's own failure is its to report
      }
    };
    if (chatId !== undefined) return tell([chatId]);
    if (!mapping || jid.endsWith('@g.us')) return tell(chatIdsOf(jid));
    void bothIdentities([jid], mapping)
      .then((jids) => tell([...new Set([...chatIdsOf(jid), ...jids.flatMap(chatIdsOf)])]))
      .catch(() => tell(chatIdsOf(jid)));
  }
}
