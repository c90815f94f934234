import type { Clock } from '@metronome/core';
import type { Timers } from '@metronome/transports';
import { DisconnectReason, WAMessageStatus, type WAMessageUpdate } from '@whiskeysockets/baileys';
import { fakeBoom } from './fake-whatsapp-shapes.js';

// The FAKE WhatsApp's answers that come late or refuse the client (fake-whatsapp-socket.ts
// asks this at connect, before the write and after it), shaped as Baileys 7.0.0-rc14 emits
// them: a `failure` node's Boom on connect (Socket/socket.js CB:failure), `Timed Out` from a
// query (Utils/generics.js promiseTimeout), and a server ERROR ack as `messages.update`
// (Socket/messages-recv.js handleBadAck).

/** Baileys' text after 463 (Utils/decode-wa-message.js ACCOUNT_RESTRICTED_TEXT). */
const ACCOUNT_RESTRICTED_TEXT = 'Your account has been restricted';

/**
 * A message the server ERROR-acks after the write: which one, the code, and when: `later` (the
 * default: after Baileys flushed the send's events, a `messages.update`) or `once` (at once:
 * Baileys folds it into the sent message's own `messages.upsert`, Utils/event-buffer.js).
 */
export type FakeAckRefusal = { code: number; when: (m: { jid: string; index: number }) => boolean; at?: 'once' | 'later' };

export class FakeWhatsAppAnswers {
  /** every connection attempt of a paired device (the refusals on connect count here) */
  readonly connectAttempts: { accountId: string; at: number }[] = [];
  /** every server ERROR ack sent, in order */
  readonly ackErrors: { accountId: string; jid: string; messageId: string; code: number }[] = [];
  private readonly connectRefusals = new Map<string, number>();
  private readonly slowLookups = new Map<string, number>();
  private readonly ackRefusals = new Map<string, FakeAckRefusal>();
  private readonly written = new Map<string, number>();
  private readonly writtenChats = new Map<string, Set<string>>();
  private readonly timeLocks = new Map<string, number>();
  private timers: Timers | null = null;

  constructor(private readonly clock: Clock) {}

  /** The fake's query timers run on these (a manual clock's in tests); needed for slow lookups. */
  useTimers(timers: Timers): void {
    this.timers = timers;
  }

  /** Every connection of the account is refused with `statusCode` (405: the client version is outdated) until cleared. */
  refuseConnect(accountId: string, statusCode: number | null): void {
    if (statusCode === null) this.connectRefusals.delete(accountId);
    else this.connectRefusals.set(accountId, statusCode);
  }

  /** Group metadata of the account takes `ms` to answer; past the socket's query timeout, Baileys' `Timed Out` (408). */
  slowGroupMetadata(accountId: string, ms: number | null): void {
    if (ms === null) this.slowLookups.delete(accountId);
    else this.slowLookups.set(accountId, ms);
  }

  /** Messages of the account matching `when` (the chat, and the count of its writes so far, 0-based) are ERROR-acked with `code` after the write. */
  refuseAfterWrite(accountId: string, refusal: FakeAckRefusal): void {
    this.ackRefusals.set(accountId, refusal);
  }

  /**
   * WhatsApp locks the account out of new chats until `until` (fake clock ms): the open socket
   * gets `connection.update` `reachoutTimeLock`, and a message to a chat the account never
   * wrote to is ERROR-acked with 463 while the lock lasts.
   */
  lockReachout(
    accountId: string,
    until: number,
    emit: (update: { reachoutTimeLock: { isActive: boolean; timeEnforcementEnds?: Date; enforcementType?: string } }) => void,
  ): void {
    this.timeLocks.set(accountId, until);
    emit({ reachoutTimeLock: { isActive: true, timeEnforcementEnds: new Date(until), enforcementType: 'DEFAULT' } });
  }

  /** At connect: the Boom the server's `failure` node closes the socket with, if refused. */
  onConnect(accountId: string): Error | null {
    this.connectAttempts.push({ accountId, at: this.clock.now() });
    const code = this.connectRefusals.get(accountId);
    return code === undefined ? null : fakeBoom('Connection Failure', { statusCode: code, data: { reason: String(code) } });
  }

  /** Before a group lookup answers: waits as slow as set, or throws Baileys' query timeout. */
  async beforeLookup(accountId: string, queryTimeoutMs: number): Promise<void> {
    const ms = this.slowLookups.get(accountId);
    if (ms === undefined) return;
    if (!this.timers) throw new Error('slowGroupMetadata needs useTimers()');
    const timers = this.timers;
    await new Promise<void>((resolve) => timers.setTimeout(resolve, Math.min(ms, queryTimeoutMs)));
    if (ms >= queryTimeoutMs) throw fakeBoom('Timed Out', { statusCode: DisconnectReason.timedOut, data: { stack: 'fake query' } });
  }

  /** The account's reach-out time lock as Baileys' fetchAccountReachoutTimelock answers it (Socket/socket.js). */
  reachoutLockOf(accountId: string): { isActive: boolean; timeEnforcementEnds?: Date; enforcementType: string } {
    const until = this.timeLocks.get(accountId) ?? 0;
    return until > this.clock.now()
      ? { isActive: true, timeEnforcementEnds: new Date(until), enforcementType: 'DEFAULT' }
      : { isActive: false, timeEnforcementEnds: undefined, enforcementType: 'DEFAULT' };
  }

  /** After a write: the server's ERROR ack, as Baileys' `messages.update` (and when it comes), or null when the message is taken. */
  afterWrite(accountId: string, jid: string, messageId: string): { updates: WAMessageUpdate[]; atOnce: boolean } | null {
    const index = this.written.get(accountId) ?? 0;
    this.written.set(accountId, index + 1);
    const chats = this.writtenChats.get(accountId) ?? new Set<string>();
    const newChat = !chats.has(jid);
    chats.add(jid);
    this.writtenChats.set(accountId, chats);
    const locked = (this.timeLocks.get(accountId) ?? 0) > this.clock.now() && newChat && !jid.endsWith('@g.us');
    const refusal = this.ackRefusals.get(accountId);
    const code = locked ? 463 : refusal?.when({ jid, index }) ? refusal.code : null;
    if (code === null) return null;
    this.ackErrors.push({ accountId, jid, messageId, code });
    const update = { status: WAMessageStatus.ERROR, messageStubParameters: code === 463 ? [String(code), ACCOUNT_RESTRICTED_TEXT] : [String(code)] };
    return { updates: [{ key: { remoteJid: jid, fromMe: true, id: messageId }, update }], atOnce: !locked && refusal?.at === 'once' };
  }
}
