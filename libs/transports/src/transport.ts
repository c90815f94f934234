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

export type OutgoingPart =
  | { type: 'text'; text: string }
  | {
      type: 'media';
      mediaRef: string;
      caption?: string;
      contentType: string;
      filename: string | null;
      /** 'with-first-send' transports, on this media's first send from the account: the content, uploaded with the send. */
      upload?: MediaContent;
    };

export interface OutgoingMessage {
  chatId: string;
  /** the chat's forum topic (Telegram's message_thread_id); absent: the chat's General */
  threadId?: number;
  part: OutgoingPart;
  partIndex: number;
  partCount: number;
  /** `{runId}:{chatId}:{partIndex}` (a topic: `{chatId}/{threadId}`): the platform may use it to drop a repeat */
  idempotencyKey: string;
  /** Called once when the request's last byte left this process (`reportsWrites`); the sender spaces writes by it. */
  onWritten?: () => void;
}

export type PrepareResult = { ok: true; ref: string; expiresAt: Date } | { ok: false; result: SendFailure };

/** A messaging platform as the sender sees it: every answer is translated into a SendResult (CONTRACT §5 outcomes). */
export interface Transport {
  readonly platform: 'http' | 'telegram' | 'telegram_user' | 'whatsapp';
  /**
   * 'prepare' (default): `prepareMedia` returns a reference. 'with-first-send': the platform has no upload-only call (the Bot API
   * returns a file_id only from a send), so a media's first send carries its content and returns the reference.
   */
  readonly mediaUpload?: 'prepare' | 'with-first-send';
  /** Whether `send` calls `onWritten`; absent: the sender takes the moment it called. */
  readonly reportsWrites?: boolean;
  /** The longest text and caption in UTF-16 code units, checked before a chat's first part (`text_too_long`). */
  readonly textLimits?: { readonly text: number; readonly caption: number };
  /** Uploads a media once for an account and returns the platform's reusable reference ('prepare' transports). */
  prepareMedia(account: TransportAccount, media: MediaContent, signal?: AbortSignal): Promise<PrepareResult>;
  /** Not ready when another replica should take the job (WhatsApp: the account's socket is open there); re-delayed as `lock-busy`. */
  readiness?(accountId: string): Promise<{ ready: true } | { ready: false; retryAfterMs: number; reason: string }>;
  /** Typing first (CONTRACT §3): cosmetic, it never throws and never fails a send. Absent: no typing. */
  showTyping?(account: TransportAccount, chatId: string, part: OutgoingPart, threadId?: number): Promise<void>;
  /** How long one `showTyping` shows, ms: the sender repeats it for a longer typing. */
  readonly typingLastsMs?: number;
  /** Lists the account's chats (CONTRACT §3): a complete listing ends in `sink.replaceAll`; failures go to `sink.syncState`, never thrown. */
  syncDirectory?(account: TransportAccount, sink: ChatDirectorySink, signal?: AbortSignal): Promise<void>;
  /** Sends one part to one chat. Never throws for platform or network failures: it classifies them. */
  send(account: TransportAccount, message: OutgoingMessage): Promise<SendResult>;
  close(): Promise<void>;
}
