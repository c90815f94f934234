import type { Clock } from '@metronome/core';
import type { WhatsAppSocketFactory } from '@metronome/transports/whatsapp';
import { FakeWhatsAppAnswers } from './fake-whatsapp-answers.js';
import { FakeWhatsAppGroups } from './fake-whatsapp-groups.js';
import { FakeWhatsAppReceipts } from './fake-whatsapp-receipts.js';
import { FakeWhatsAppLids } from './fake-whatsapp-lids.js';
import { FakeWhatsAppSocket } from './fake-whatsapp-device.js';
import { fakeBoom, fakeIncoming, type FakeFault, type FakeMessage, type FakeUpload } from './fake-whatsapp-shapes.js';
import { DisconnectReason, type GroupMetadata, type proto, type WAMessage } from '@whiskeysockets/baileys';

/**
 * A FAKE WhatsApp: no network, no WhatsApp server. It stands where Baileys' socket would
 * (`makeWASocket`), speaks the same object API and answers as WhatsApp does — QR payloads
 * built from the socket's own credentials, pair-success followed by "restart required", group
 * lookups through `cachedGroupMetadata`, errors shaped like Baileys' (Boom, codes in `data` or
 * `output.statusCode`), a second connection of one device replacing the first, the groups
 * each account is in and their notifications (fake-whatsapp-groups.ts) — and records what
 * reached it, with fault switches for tests.
 */

export { FakeWhatsAppSocket } from './fake-whatsapp-device.js';
export { fakeBoom, type FakeFault, type FakeMessage, type FakeUpload } from './fake-whatsapp-shapes.js';

export class FakeWhatsAppNetwork {
  readonly messages: FakeMessage[] = [];
  readonly uploads: FakeUpload[] = [];
  /** every presence update an account sent to a chat (typing: `composing`), with the fake clock's time */
  readonly presences: { accountId: string; jid: string; presence: string; at: number }[] = [];
  readonly groupLookups: { accountId: string; jid: string }[] = [];
  readonly sockets: FakeWhatsAppSocket[] = [];
  /** retry receipts: a recipient's device could not decrypt a message and asked for it again */
  readonly retries: { accountId: string; messageId: string; resent: proto.IMessage | null }[] = [];
  /** every time a device connected while another connection of it was open (the server replaced one) */
  readonly replacements: { accountId: string; at: number }[] = [];
  readonly groups = new Map<string, GroupMetadata>();
  /** the LID of each user the server knows (fake-whatsapp-lids.ts) */
  readonly lids = new FakeWhatsAppLids();
  /** groups with the fake's accounts as members, listed by `groupFetchAllParticipating` and changed by their notifications */
  readonly groupBook = new FakeWhatsAppGroups(
    (accountId) => this.openByAccount.get(accountId),
    () => this.clock.now(),
  );
  /** every `groupFetchAllParticipating` the server answered or refused */
  readonly groupFetches: { accountId: string; at: number }[] = [];
  /** every connection opening and closing, in order */
  readonly timeline: { accountId: string; socketId: number; event: 'open' | 'close' }[] = [];
  /** devices the phone logged out: they cannot connect again until paired anew */
  readonly loggedOut = new Set<string>();
  private readonly faults = new Map<string, FakeFault[]>();
  private readonly gates = new Map<string, Promise<void>>();
  private readonly everOpen = new Set<FakeWhatsAppSocket>();
  private readonly overlimit = new Map<string, number>();
  private readonly openByAccount = new Map<string, FakeWhatsAppSocket>();
  /** messages written to an account while none of its sockets was open, delivered on its next connection */
  private readonly heldIncoming = new Map<string, WAMessage[]>();
  private nextSocketId = 1;
  /** late and refusing answers: ERROR acks after the write, reachout time locks, 405 on connect, slow lookups (fake-whatsapp-answers.ts) */
  readonly answers: FakeWhatsAppAnswers;
  /** delivery and read receipts the server sends (fake-whatsapp-receipts.ts) */
  readonly receipts: FakeWhatsAppReceipts;

  constructor(readonly clock: Clock) {
    this.answers = new FakeWhatsAppAnswers(clock);
    this.receipts = new FakeWhatsAppReceipts((a) => this.openByAccount.get(a), clock);
  }

  /** The factory to hand to the socket pool in place of `makeWASocket`. */
  readonly factory: WhatsAppSocketFactory = (accountId, config) => {
    const socket = new FakeWhatsAppSocket(this, accountId, this.nextSocketId++, config);
    this.sockets.push(socket);
    return socket;
  };

  /** A group the fake server knows, with its participants. */
  addGroup(jid: string, participants: string[]): void {
    this.groups.set(jid, { id: jid, subject: jid, owner: undefined, participants: participants.map((id) => ({ id })) });
  }

  /** The next sends or lookups of the account fail this way (each fault once). */
  failNext(accountId: string, ...faults: FakeFault[]): void {
    this.faults.set(accountId, [...(this.faults.get(accountId) ?? []), ...faults]);
  }

  /** The account's next fault, consumed only when `applies` to where it would strike. */
  /** Every lookup and send of the account is refused with `rate-overlimit` until `until` (fake clock, ms). */
  overlimitUntil(accountId: string, until: number): void {
    this.overlimit.set(accountId, until);
  }

  isOverlimit(accountId: string): boolean {
    return (this.overlimit.get(accountId) ?? 0) > this.clock.now();
  }

  takeFault(accountId: string, applies: (fault: FakeFault) => boolean): FakeFault | undefined {
    if (this.isOverlimit(accountId)) return 'rate-overlimit';
    const queue = this.faults.get(accountId);
    if (!queue?.length || !applies(queue[0]!)) return undefined;
    return queue.shift();
  }

  /** The socket of the account that is open now, if any. */
  openSocket(accountId: string): FakeWhatsAppSocket | undefined {
    return this.openByAccount.get(accountId);
  }

  opened(socket: FakeWhatsAppSocket): void {
    this.everOpen.add(socket);
    this.timeline.push({ accountId: socket.accountId, socketId: socket.id, event: 'open' });
    const older = this.openByAccount.get(socket.accountId);
    this.openByAccount.set(socket.accountId, socket);
    if (older && older !== socket && !older.closed) {
      // What WhatsApp does when a device connects twice: the older connection is closed.
      this.replacements.push({ accountId: socket.accountId, at: this.clock.now() });
      older.drop(fakeBoom('Stream Errored (conflict)', { statusCode: DisconnectReason.connectionReplaced }));
    }
  }

  closed(socket: FakeWhatsAppSocket): void {
    if (this.everOpen.delete(socket)) this.timeline.push({ accountId: socket.accountId, socketId: socket.id, event: 'close' });
    if (this.openByAccount.get(socket.accountId) === socket) this.openByAccount.delete(socket.accountId);
  }

  /**
   * The operator scans the QR (or types the code) on the phone: the server sends pair-success
   * to the account's pairing socket, which stores its new identity, then asks it to restart.
   */
  completePairing(accountId: string, phoneNumber = '60123456789'): void {
    const socket = [...this.sockets].reverse().find((s) => s.accountId === accountId && s.offeredQr && !s.closed);
    if (!socket) throw new Error(`no pairing socket of ${accountId} is waiting`);
    socket.pairSuccess(phoneNumber);
  }

  /** The most connections of the account that were ever open at once (the server allows one). */
  maxOpenAtOnce(accountId: string): number {
    let open = 0;
    let max = 0;
    for (const e of this.timeline) {
      if (e.accountId !== accountId) continue;
      open += e.event === 'open' ? 1 : -1;
      max = Math.max(max, open);
    }
    return max;
  }

  /** Holds every send of the account after it reached the server, until the returned function is called. */
  holdSends(accountId: string): () => void {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    this.gates.set(accountId, gate);
    return () => {
      this.gates.delete(accountId);
      release();
    };
  }

  gate(accountId: string): Promise<void> | undefined {
    return this.gates.get(accountId);
  }

  /**
   * FAKE incoming message: a person (`from`, a JID) writes `text` to the account. As WhatsApp
   * does, an open socket gets it at once (`messages.upsert`, type `notify`); with none open, the
   * server holds it and delivers it after the account's next connection opens (type `append`,
   * Baileys' offline messages). `fromMe`: the account itself wrote it (from the phone);
   * `participant`: a member's message in the group `from`.
   */
  fakeIncomingMessage(accountId: string, m: { from: string; text: string; fromMe?: boolean; participant?: string; pushName?: string }): void {
    const message = fakeIncoming(m, this.clock.now());
    const open = this.openByAccount.get(accountId);
    if (open && !open.closed) open.receive([message], 'notify');
    else this.heldIncoming.set(accountId, [...(this.heldIncoming.get(accountId) ?? []), message]);
  }

  /** The messages held for an account while it had no open socket, handed over once. */
  takeHeldIncoming(accountId: string): WAMessage[] {
    const held = this.heldIncoming.get(accountId) ?? [];
    this.heldIncoming.delete(accountId);
    return held;
  }

  /** Messages that reached the fake server for one chat, in arrival order. */
  messagesTo(jid: string): FakeMessage[] {
    return this.messages.filter((m) => m.jid === jid);
  }
}
