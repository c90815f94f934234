import { classifyTransportFailure, systemClock, type ChatDirectorySink, type Clock, type SendResult } from '@metronome/core';
import { classifyOversizedAnswer } from '../bounded-answer.js';
import { registerCredentials, scrubResult } from '../secret-scrub.js';
import type { OutgoingMessage, OutgoingPart, PrepareResult, Transport, TransportAccount } from '../transport.js';
import { MEDIA_TOO_LARGE, uploadTooLarge } from '../upload-limits.js';
import { BotApiClient, isBotToken } from './bot-api-client.js';
import { syncBotDirectory } from './directory-sync.js';
import { FILE_KINDS, fileRef, parseFileRef, sentFile, uploadKind, type FileKind } from './media-methods.js';
import { multipartBody, type FormField } from './multipart.js';
import { classifyBotApiError } from './telegram-errors.js';

export interface TelegramTransportOptions {
  baseUrl: string;
  timeoutMs: number;
  maxSockets?: number;
  clock?: Clock;
}

/**
 * The Telegram Bot API (an account is a bot). A media is uploaded with its first send (no upload-only call) and sent by
 * file_id after, by the method of the kind Telegram filed it under. No idempotency key: a send failing after it was written is
 * `ambiguous`, never re-sent.
 */
export class TelegramTransport implements Transport {
  readonly platform = 'telegram' as const;
  readonly mediaUpload = 'with-first-send' as const;
  readonly reportsWrites = true;
  /** UTF-16 code units, as Telegram counts them (no parse_mode is sent, so nothing is parsed away). */
  readonly textLimits = { text: 4_096, caption: 1_024 } as const;
  private readonly client: BotApiClient;
  private readonly clock: Clock;

  constructor(options: TelegramTransportOptions) {
    this.client = new BotApiClient(options);
    this.clock = options.clock ?? systemClock;
  }

  async prepareMedia(): Promise<PrepareResult> {
    return { ok: false, result: { kind: 'rejected', code: 'upload_with_first_send', message: 'Telegram media is uploaded by its first send' } };
  }

  async send(account: TransportAccount, message: OutgoingMessage): Promise<SendResult> {
    registerCredentials(account);
    return scrubResult(await this.deliver(account, message));
  }

  /** Telegram shows a chat action for 5 s at most (or until the bot's next message). */
  readonly typingLastsMs = 5_000;

  /** sendChatAction by the kind about to be sent; a refusal changes nothing about the message. */
  async showTyping(account: TransportAccount, chatId: string, part: OutgoingPart, threadId?: number): Promise<void> {
    registerCredentials(account);
    const token = account.credentials?.['botToken'];
    if (!isBotToken(token)) return;
    if (part.type === 'media' && part.upload && uploadTooLarge(this.platform, part.upload.bytes.length)) return;
    const action = part.type === 'text' ? 'typing' : FILE_KINDS[mediaKindOf(part)].action;
    const to = threadId ? { chat_id: chatId, message_thread_id: threadId } : { chat_id: chatId };
    await this.client.call(token, 'sendChatAction', json({ ...to, action })).catch(() => undefined);
  }

  /** From the updates Telegram holds for the bot, never confirming one, so the owner's own poller or webhook misses nothing. */
  async syncDirectory(account: TransportAccount, sink: ChatDirectorySink): Promise<void> {
    registerCredentials(account);
    const token = account.credentials?.['botToken'];
    const now = () => this.clock.now();
    if (!isBotToken(token)) {
      await sink.syncState(account.id, { status: 'failed', reason: 'the account has no bot token of the form <bot id>:<secret>' }, new Date(now()));
      return;
    }
    await syncBotDirectory(this.client, token, account.id, sink, now);
  }

  private async deliver(account: TransportAccount, message: OutgoingMessage): Promise<SendResult> {
    const token = account.credentials?.['botToken'];
    if (!isBotToken(token)) {
      return { kind: 'account-unavailable', code: 'bot_token_invalid', message: 'the account has no bot token of the form <bot id>:<secret>' };
    }
    const { chatId, part } = message;
    // without message_thread_id Telegram posts to General
    const to: Record<string, unknown> = message.threadId ? { chat_id: chatId, message_thread_id: message.threadId } : { chat_id: chatId };
    if (part.type === 'text') return this.request(token, 'sendMessage', json({ ...to, text: part.text }), chatId, false, message.onWritten);
    const kind = mediaKindOf(part);
    const { method, field } = FILE_KINDS[kind];
    if (!part.upload) {
      const { fileId } = parseFileRef(part.mediaRef, part.contentType);
      return this.request(
        token,
        method,
        json({ ...to, [field]: fileId, ...(part.caption ? { caption: part.caption } : {}) }),
        chatId,
        false,
        message.onWritten,
      );
    }
    // Over the Bot API's upload limit: refused here, never posted.
    const tooLarge = uploadTooLarge(this.platform, part.upload.bytes.length);
    if (tooLarge) return { kind: 'rejected', code: MEDIA_TOO_LARGE, message: `${tooLarge}: not sent` };
    const result = await this.request(token, method, uploadBody(to, part, field), chatId, true, message.onWritten);
    // A photo Telegram will not take as one: a 400 means nothing was posted, so the same file goes once more as a document.
    if (kind === 'photo' && result.kind === 'rejected' && PHOTO_REFUSALS.has(result.code)) {
      return this.request(token, FILE_KINDS.document.method, uploadBody(to, part, FILE_KINDS.document.field), chatId, true, message.onWritten);
    }
    return result;
  }

  private async request(
    token: string,
    method: string,
    body: { contentType: string; bytes: Buffer },
    chatId: string,
    upload: boolean,
    onWritten?: () => void,
  ): Promise<SendResult> {
    const answer = await this.client.call(token, method, body, onWritten);
    if ('oversized' in answer) {
      const result = classifyOversizedAnswer(answer.status, `Telegram ${method}`);
      if (answer.status >= 500 && answer.written && result.kind === 'retriable') return { ...result, kind: 'ambiguous' };
      return result;
    }
    if ('failure' in answer) return classifyTransportFailure(answer.code, answer.written, `Telegram ${method}: ${answer.message}`);
    const reply = answer.body;
    if (reply && reply['ok'] === true) {
      const result = (reply['result'] && typeof reply['result'] === 'object' ? reply['result'] : {}) as Record<string, unknown>;
      const id = result['message_id'];
      const messageId = typeof id === 'number' || typeof id === 'string' ? String(id) : '';
      const file = upload ? sentFile(result) : null;
      return file ? { kind: 'delivered', messageId, mediaRef: fileRef(file.kind, file.fileId) } : { kind: 'delivered', messageId };
    }
    const errorCode = Number(reply?.['error_code']);
    return classifyBotApiError(
      {
        // A 200 that is not ok is judged by its error_code, else as a bad gateway.
        status: answer.status >= 200 && answer.status < 300 ? (Number.isInteger(errorCode) && errorCode >= 400 ? errorCode : 502) : answer.status,
        description: typeof reply?.['description'] === 'string' ? reply['description'] : null,
        parameters: reply?.['parameters'] && typeof reply['parameters'] === 'object' ? (reply['parameters'] as Record<string, unknown>) : null,
        written: answer.written,
      },
      chatId,
    );
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

type MediaPart = Extract<OutgoingPart, { type: 'media' }>;

/** sendPhoto's refusals of the image itself (telegram-errors.ts): the file can still go as a document. */
const PHOTO_REFUSALS = new Set(['image_invalid', 'photo_too_large']);

function mediaKindOf(part: MediaPart): FileKind {
  return part.upload ? uploadKind(part.contentType, part.upload.bytes.length) : parseFileRef(part.mediaRef, part.contentType).kind;
}

function uploadBody(to: Record<string, unknown>, part: MediaPart, field: string): { contentType: string; bytes: Buffer } {
  const fields: FormField[] = Object.entries(to).map(([name, value]) => ({ name, value: String(value) }));
  if (part.caption) fields.push({ name: 'caption', value: part.caption });
  fields.push({ name: field, filename: part.filename ?? defaultFilename(part.contentType), contentType: part.contentType, bytes: part.upload!.bytes });
  return multipartBody(fields);
}

function json(value: Record<string, unknown>): { contentType: string; bytes: Buffer } {
  return { contentType: 'application/json', bytes: Buffer.from(JSON.stringify(value)) };
}

/** Telegram shows a document's file name: give one with a fitting extension when the media has none. */
function defaultFilename(contentType: string): string {
  const sub =
    contentType
      .split(';')[0]!
      .split('/')[1]
      ?.replace(/[^a-z0-9]/gi, '') ?? '';
  return sub ? `file.${sub}` : 'file';
}
