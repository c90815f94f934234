import { randomBytes } from 'node:crypto';
import type { proto, WAMessage } from '@whiskeysockets/baileys';

// The FAKE WhatsApp's records and errors (fake-whatsapp-socket.ts).

export type FakeFault = 'rate-overlimit' | 'logged-out' | 'connection-closed' | 'timeout-after-handover';

/** A message as the fake server received it. */
export interface FakeMessage {
  accountId: string;
  socketId: number;
  jid: string;
  messageId: string;
  /** what the message said: its text, or the media message (imageMessage…, with caption) */
  content: { text: string } | proto.IMessage;
  at: number;
}

export interface FakeUpload {
  accountId: string;
  mediaType: string;
  fileEncSha256B64: string;
  bytes: number;
  at: number;
}

/** Error objects in Boom's shape, as Baileys throws them. */
export function fakeBoom(message: string, opts: { statusCode?: number; data?: unknown }): Error {
  const statusCode = opts.statusCode ?? 500;
  return Object.assign(new Error(message), {
    isBoom: true,
    data: opts.data ?? null,
    output: { statusCode, payload: { statusCode, error: 'Error', message }, headers: {} },
  });
}

/** A message a person wrote to an account, as Baileys gives it (`fakeIncomingMessage`). */
export function fakeIncoming(m: { from: string; text: string; fromMe?: boolean; participant?: string; pushName?: string }, nowMs: number): WAMessage {
  return {
    ...(m.pushName && { pushName: m.pushName }),
    key: {
      remoteJid: m.from,
      fromMe: m.fromMe ?? false,
      id: `FAKE${randomBytes(8).toString('hex').toUpperCase()}`,
      ...(m.participant && { participant: m.participant }),
    },
    message: { conversation: m.text },
    messageTimestamp: Math.floor(nowMs / 1000),
  } as WAMessage;
}
