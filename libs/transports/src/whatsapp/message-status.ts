import type { Clock } from '@metronome/core';
import { jidDecode, WAMessageStatus, type WAMessageKey } from '@whiskeysockets/baileys';
import { classifyAckError, REPLACED_HOLD_MS, type AckRefusal, type WhatsAppFailure } from './classify.js';
import { bothIdentities, type LidMapping } from './lid-identity.js';
import { chatIdsOf, directReceipt, isOwnJid, memberReceipt, type MessageReceipt } from './message-receipts.js';
import type { WhatsAppSocketEvents } from './socket.js';

// What WhatsApp says about a message after the write, from ONE `messages.update` listener per
// socket: a server ERROR ack (Baileys handleBadAck), delivery and read receipts
// (message-receipts.ts; groups per member from `message-receipt.update`). A 463 is also told as
// the account's (new-chats.ts: its new chats wait).

/** A message this replica wrote, refused by the server afterwards. */
export interface MessageRefusal {
  accountId: string;
  messageId: string;
  /** the chat id the send was given (as the target names it) */
  chatId: string;
  refusal: AckRefusal;
}

type On = <E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void) => void;

/** How many written messages per account are remembered for their later answers. */
const TRACKED_PER_ACCOUNT = 20_000;

/** What the statuses tell besides refusals: receipts, and how many members a group has. */
export interface ReceiptHooks {
  onReceipt?: (receipt: MessageReceipt) => void;
  /** the members of a group a message went to (the account left out), when known */
  memberCount?: (accountId: string, jid: string) => number | null;
  /** a message to a new chat was refused with 463 (new-chats.ts) */
  onNewChatRefused?: (accountId: string) => void;
  /** a re-send of a message to one device (after its retry receipt) was refused: the message itself stands */
  onResendRefused?: (refusal: MessageRefusal) => void;
}

/** A message this replica wrote: the chat id its send was given, and whether a device asked for it again. */
interface Written {
  chatId: string;
  resent: boolean;
}

export class MessageStatuses {
  private readonly written = new Map<string, Map<string, Written>>();
  /** accounts whose open connection the server replaced with another of the device (440), and when */
  private readonly replacedAt = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly onRefusal: (refusal: MessageRefusal) => void = () => undefined,
    private readonly hooks: ReceiptHooks = {},
  ) {}

  /** The account's socket wrote `messageId` to `jid` (the target's `chatId`). */
  track(accountId: string, messageId: string, chatId: string): void {
    let ids = this.written.get(accountId);
    if (!ids) this.written.set(accountId, (ids = new Map()));
    if (ids.size >= TRACKED_PER_ACCOUNT) ids.delete(ids.keys().next().value!);
    ids.set(messageId, { chatId, resent: false });
  }

  /**
   * A device of the recipient asked for `messageId` again (a retry receipt: it got the message
   * and could not decrypt it); Baileys re-sends it to that device, or to every device when the
   * phone asked, under the same id. An ERROR ack from then is that re-send's, not the message's.
   */
  resending(accountId: string, messageId: string): void {
    const w = this.written.get(accountId)?.get(messageId);
    if (w) w.resent = true;
  }

  /**
   * Listens to the account's socket: its messages' later answers.
   * `mapping`: the socket's LID mapping, for receipts of messages this replica did not write;
   * `me`: the account's own identity, whose devices' group receipts are no member's.
   */
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
    // An ack or receipt that comes while Baileys buffers its events (Utils/event-buffer.js) is
    // folded into the sent message's own upsert: a refusal as its status, a one-to-one receipt as
    // its status and time, a group's as its `userReceipt`; no update follows.
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

  /** A group member's receipt; the account's own devices' are no member's. */
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

  /** A server ERROR ack of a message this replica wrote (Baileys' handleBadAck): told as a refusal. */
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

  /**
   * The server closed the account's open connection for another one of the same device (a
   * `conflict` stream error, 440: the operator's other program or a second replica): no new
   * connection for REPLACED_HOLD_MS, or the two would take the session from each other.
   */
  replaced(accountId: string): void {
    this.replacedAt.set(accountId, this.clock.now());
  }

  /** While a replacement holds, why a connection of the account is not opened; else null. */
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

  /**
   * Tells a receipt, naming the chat as the send did when this replica wrote it. A message it
   * did not write (a receipt after a restart, or to another replica's send) is named by every
   * form of the JID and of the same person's other identity (a receipt by LID for a send to
   * the phone number, or the reverse) as the mapping knows it. Never throws into the socket.
   */
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
