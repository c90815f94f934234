import type { Clock } from '@metronome/core';
import { WAMessageStatus } from '@whiskeysockets/baileys';
import type { FakeWhatsAppSocket } from './fake-whatsapp-device.js';

// The FAKE WhatsApp server's receipts, shaped as Baileys emits them (Socket/messages-recv.js
// handleReceipt): one-to-one chats as `messages.update` with a status and the receipt's time in
// seconds; groups as `message-receipt.update` per member. Sent to the account's open socket.

export interface FakeReceipt {
  accountId: string;
  jid: string;
  messageId: string;
  status: 'delivered' | 'read';
  member: string | null;
  /** seconds since the epoch, as WhatsApp stamps it */
  t: number;
}

export class FakeWhatsAppReceipts {
  /** every receipt the fake server sent */
  readonly sent: FakeReceipt[] = [];

  constructor(
    private readonly openSocket: (accountId: string) => FakeWhatsAppSocket | undefined,
    private readonly clock: Clock,
  ) {}

  /** The recipient of a one-to-one message got it (two ticks) or read it (blue ticks). */
  direct(accountId: string, jid: string, messageId: string, status: 'delivered' | 'read', atMs = this.clock.now()): void {
    const t = Math.floor(atMs / 1000);
    this.emit(accountId, { accountId, jid, messageId, status, member: null, t }, (s) =>
      s.serverEvent('messages.update', [
        {
          key: { remoteJid: jid, fromMe: true, id: messageId },
          update: { status: status === 'delivered' ? WAMessageStatus.DELIVERY_ACK : WAMessageStatus.READ, messageTimestamp: t },
        },
      ]),
    );
  }

  /** A member of the group `jid` got or read the message. */
  member(accountId: string, jid: string, messageId: string, member: string, status: 'delivered' | 'read', atMs = this.clock.now()): void {
    const t = Math.floor(atMs / 1000);
    this.emit(accountId, { accountId, jid, messageId, status, member, t }, (s) =>
      s.serverEvent('message-receipt.update', [
        {
          key: { remoteJid: jid, fromMe: true, id: messageId, participant: member },
          receipt: { userJid: member, ...(status === 'delivered' ? { receiptTimestamp: t } : { readTimestamp: t }) },
        },
      ]),
    );
  }

  private emit(accountId: string, r: FakeReceipt, send: (s: FakeWhatsAppSocket) => void): void {
    const socket = this.openSocket(accountId);
    if (!socket || socket.closed) throw new Error(`no open socket of ${accountId} for a receipt`);
    this.sent.push(r);
    send(socket);
  }
}
