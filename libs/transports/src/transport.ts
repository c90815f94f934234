import type { ChatDirectorySink, SendFailure, SendResult } from '@metronome/core';

/** The account a transport acts for. Credentials arrive decrypted; transports never log them. */
export interface TransportAccount {
  id: string;
  externalId: string | null;
  credentials: Record<string, unknown> | null;
  /** whatsapp, telegram_user: the proxy URL it connects through, opened (docs/platforms.md, "Proxy"); absent or null: none */
  proxy?: string | null;
}

export interface MediaContent {
  mediaId: string;
  contentType: string;
  sha256: string;
  filename: string | null;
  bytes: Buffer;
}

/** One part of a message to one chat. */
export type OutgoingPart =
  | { type: 'text'; text: string }
  | {
      type: 'media';
      /** the platform's reference to the media; empty when `upload` is set */
      mediaRef: string;
      caption?: string;
      contentType: string;
      filename: string | null;
      /**
       * Only for transports whose `mediaUpload` is 'with-first-send', on the first send of this
       * media from this account: the content itself, uploaded with this send. The transport
       * reports the platform's new reference as `mediaRef` of its `delivered` result.
       */
      upload?: MediaContent;
    };

export interface OutgoingMessage {
  chatId: string;
  /** the chat's forum topic (Telegram's message_thread_id); absent: none (the chat's General) */
  threadId?: number;
  part: OutgoingPart;
  partIndex: number;
  partCount: number;
  /** `{runId}:{chatId}:{partIndex}` (a topic: `{chatId}/{threadId}`): the platform may use it to drop a repeat */
  idempotencyKey: string;
  /**
   * Called once, when the request's last byte left this process (transports with
   * `reportsWrites`); the sender spaces an account's requests by it (gate.ts `spaceWrite`).
   */
  onWritten?: () => void;
}

export type PrepareResult = { ok: true; ref: string; expiresAt: Date } | { ok: false; result: SendFailure };

/**
 * A messaging platform as the sender sees it. The sender does not know which one it drives:
 * every answer is translated into a SendResult (CONTRACT §5 outcomes).
 */
export interface Transport {
  readonly platform: 'http' | 'telegram' | 'telegram_user' | 'whatsapp';
  /**
   * How media reaches the platform. 'prepare' (the default when absent): `prepareMedia` uploads
   * it and returns a reference. 'with-first-send': the platform has no upload-only call (the
   * Telegram Bot API returns a file_id only from a send), so the first send of a media carries
   * its content (`OutgoingPart.upload`) and its delivered result carries the new reference.
   */
  readonly mediaUpload?: 'prepare' | 'with-first-send';
  /**
   * Whether `send` calls the message's `onWritten` when its request left this process (the HTTP
   * clients, through postOnce). Absent: it cannot tell, and the sender takes the moment it called.
   */
  readonly reportsWrites?: boolean;
  /**
   * The longest text and caption the platform takes, in UTF-16 code units, checked on each
   * chat's rendered parts before its first part is sent (a longer one fails the chat with
   * `text_too_long`, nothing sent). Absent: the platform's own answer decides.
   */
  readonly textLimits?: { readonly text: number; readonly caption: number };
  /** Uploads a media once for an account and returns the platform's reusable reference ('prepare' transports). */
  prepareMedia(account: TransportAccount, media: MediaContent, signal?: AbortSignal): Promise<PrepareResult>;
  /**
   * Asked before a job takes the account: not ready when this replica should leave the job to
   * another for now (WhatsApp: the account's one socket is open on another replica, which will
   * most likely get the account's next job; taking the socket over costs a reconnection). The
   * job is then re-delayed (`lock-busy`) without touching any target. Absent: always ready.
   */
  readiness?(accountId: string): Promise<{ ready: true } | { ready: false; retryAfterMs: number; reason: string }>;
  /**
   * Typing first (CONTRACT §3, accounts: `typing`): shows the chat, now, that the account is
   * typing `part` (or preparing its media), in forum topic `threadId` when given. Cosmetic: it never throws and never fails a send; a
   * refusal is only logged. Absent: the platform shows no typing.
   */
  showTyping?(account: TransportAccount, chatId: string, part: OutgoingPart, threadId?: number): Promise<void>;
  /** How long one `showTyping` shows, ms: the sender repeats it for a longer typing. Absent: until the message arrives. */
  readonly typingLastsMs?: number;
  /**
   * Lists the account's chats into its chat directory (CONTRACT §3): one complete listing ends in
   * `sink.replaceAll`; progress, a platform's "slow down" and a platform that cannot list are
   * `sink.syncState`. Never throws for platform or network failures: it reports them there.
   * Absent: the platform cannot list chats.
   */
  syncDirectory?(account: TransportAccount, sink: ChatDirectorySink, signal?: AbortSignal): Promise<void>;
  /** Sends one part to one chat. Never throws for platform or network failures: it classifies them. */
  send(account: TransportAccount, message: OutgoingMessage): Promise<SendResult>;
  close(): Promise<void>;
}
