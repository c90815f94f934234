import { LoopWatch } from '../../services/sandbox/src/loop-watch.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseBody, type Field } from './fake-telegram-body.js';
import { filedKind, kindMismatch, MAX_CAPTION, MAX_TEXT, MEDIA_METHODS, photoRefusal, type FakeFileKind } from './fake-telegram-files.js';
import { FakeTelegramUpdates } from './fake-telegram-updates.js';

/**
 * A fake of the Telegram Bot API (https://core.telegram.org/bots/api) for tests: a real HTTP
 * server speaking the same protocol — POST /bot<token>/<method> with a JSON, urlencoded or
 * multipart/form-data body, answered `{ok: true, result: Message}` or `{ok: false, error_code,
 * description, parameters?}` with the HTTP status equal to error_code, and Telegram's own
 * descriptions. It implements sendMessage, sendPhoto, sendVideo, sendAnimation, sendAudio,
 * sendVoice, sendDocument, sendChatAction, getWebhookInfo and getUpdates
 * (fake-telegram-updates.ts), issues file_ids per bot (a file_id of another bot is refused, as
 * Telegram does), and is as strict as Telegram about media and lengths (fake-telegram-files.ts):
 * a file_id is resent only with the method of the kind it was filed under, sendPhoto takes only
 * a JPEG, PNG or WebP of at most 10 MB, a text at most 4,096 and a caption 1,024 UTF-16 code
 * units. It records every message it accepts and every send it refuses, and lets a test inject
 * Telegram's faults.
 * Times come from an injectable clock, so tests on a manual clock can check waits.
 */

/** A message the fake accepted. */
export interface FakeTelegramMessage {
  seq: number;
  /** the bot's id (the part of the token before ':') */
  botId: string;
  method: string;
  chatId: string;
  messageId: number;
  text: string | null;
  caption: string | null;
  /** the file_id sent or, for an upload, the one issued */
  fileId: string | null;
  /** the kind of the file sent (an upload: the kind Telegram filed it under) */
  kind: FakeFileKind | null;
  /** the media content came with this send (multipart), not as a file_id */
  upload: boolean;
  receivedAt: number;
  /** how much earlier than receivedAt it may have come (this process's loop was held up: services/sandbox/src/loop-watch.ts); 0 on a manual clock */
  stampSlackMs: number;
}

/** A send the fake refused. */
export interface FakeTelegramRefusal {
  at: number;
  botId: string | null;
  method: string;
  chatId: string | null;
  status: number;
  description: string;
  retryAfter: number | null;
}

type ChatFault = 'kicked' | 'blocked' | 'not_found';

const FAULT_ANSWERS: Record<ChatFault, { status: number; description: string }> = {
  kicked: { status: 403, description: 'Forbidden: bot was kicked from the group chat' },
  blocked: { status: 403, description: 'Forbidden: bot was blocked by the user' },
  not_found: { status: 400, description: 'Bad Request: chat not found' },
};

interface Bot {
  botId: string;
  revoked: boolean;
  floodUntil: number;
  chatFloodUntil: Map<string, number>;
  migrated: Map<string, string>;
  faults: Map<string, ChatFault>;
  failNext: { count: number; status: number };
  /** every call is refused with a description quoting its path, token included (echoToken) */
  echo: boolean;
  /** file_id → the kind it was filed under */
  files: Map<string, FakeFileKind>;
  nextMessageId: number;
}

export class FakeTelegramBotApi {
  readonly url: string;
  /** the bots' pending updates and webhooks, by bot id */
  readonly updates: FakeTelegramUpdates;
  private readonly bots = new Map<string, Bot>();
  private readonly received: FakeTelegramMessage[] = [];
  private readonly refused: FakeTelegramRefusal[] = [];
  private readonly actions: { botId: string; chatId: string; action: string; at: number }[] = [];
  private fileSeq = 0;
  /** content type → the kind uploads of it are filed under (fileUploadsAs) */
  private readonly fileAs = new Map<string, FakeFileKind>();
  private uploadGate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;
  private held = 0;
  private readonly watch: LoopWatch | null; // on the real clock only: a manual clock has no loop to wait for

  private constructor(
    private readonly server: http.Server,
    private now: () => number,
  ) {
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.updates = new FakeTelegramUpdates(() => this.now());
    this.watch = now === Date.now ? new LoopWatch() : null;
  }

  static async start(now: () => number = Date.now): Promise<FakeTelegramBotApi> {
    let fake: FakeTelegramBotApi | null = null;
    const server = http.createServer((req, res) => {
      void fake!.handle(req, res).catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error_code: 500, description: `Internal Server Error: ${String(error)}` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake = new FakeTelegramBotApi(server, now);
    return fake;
  }

  /** The clock stamping receipts and timing waits. */
  setClock(now: () => number): void {
    this.now = now;
  }

  /** A bot the fake knows; any other well-formed token is answered 401 Unauthorized. */
  addBot(token: string): void {
    this.bot(token, true);
  }

  /** Accepted messages in order of receipt, optionally of one bot and/or chat. */
  messages(filter: { token?: string; chatId?: string } = {}): FakeTelegramMessage[] {
    const botId = filter.token ? botIdOf(filter.token) : undefined;
    return this.received.filter((m) => (botId === undefined || m.botId === botId) && (filter.chatId === undefined || m.chatId === filter.chatId));
  }

  refusals(filter: { token?: string; chatId?: string } = {}): FakeTelegramRefusal[] {
    const botId = filter.token ? botIdOf(filter.token) : undefined;
    return this.refused.filter((r) => (botId === undefined || r.botId === botId) && (filter.chatId === undefined || r.chatId === filter.chatId));
  }

  /** Chat actions (sendChatAction: typing, upload_photo…) the fake accepted, in order, with their times. */
  chatActions(filter: { token?: string; chatId?: string } = {}): { botId: string; chatId: string; action: string; at: number }[] {
    const botId = filter.token ? botIdOf(filter.token) : undefined;
    return this.actions.filter((a) => (botId === undefined || a.botId === botId) && (filter.chatId === undefined || a.chatId === filter.chatId));
  }

  /** Sends of a bot that uploaded media content. */
  uploads(token: string): number {
    return this.messages({ token }).filter((m) => m.upload).length;
  }

  /** Refuses every send of the bot with 429 until `seconds` from now (the bot-wide flood control). */
  floodBot(token: string, seconds: number): void {
    this.bot(token).floodUntil = this.now() + seconds * 1000;
  }

  /** Refuses sends of the bot to `chatId` with 429 until `seconds` from now (a group's own limit). */
  floodChat(token: string, chatId: string, seconds: number): void {
    this.bot(token).chatFloodUntil.set(chatId, this.now() + seconds * 1000);
  }

  /** The group was upgraded to a supergroup: sends to `chatId` answer migrate_to_chat_id. */
  migrateChat(token: string, chatId: string, newChatId: string): void {
    this.bot(token).migrated.set(chatId, newChatId);
  }

  /** kicked: the bot was removed from the group; blocked: the user blocked it; not_found: no such chat. */
  setChatFault(token: string, chatId: string, fault: ChatFault | null): void {
    if (fault === null) this.bot(token).faults.delete(chatId);
    else this.bot(token).faults.set(chatId, fault);
  }

  /** The token was revoked (BotFather /revoke): every call answers 401. */
  revoke(token: string): void {
    this.bot(token).revoked = true;
  }

  /**
   * A careless Bot API, as Telegram is not today: every call of the bot is refused 400 with a
   * description that quotes the request path, and so the bot token.
   */
  echoToken(token: string): void {
    this.bot(token).echo = true;
  }

  /** The next `count` sends of the bot answer `status` (a 5xx) without being delivered. */
  failNext(token: string, count: number, status = 502): void {
    this.bot(token).failNext = { count, status };
  }

  /** The bot's file_ids stop being accepted (as after Telegram drops a file): each is refused as a wrong file identifier. */
  forgetFiles(token: string): void {
    this.bot(token).files.clear();
  }

  /**
   * Telegram files uploads of `contentType` under `kind` whatever the method (but sendPhoto),
   * as it files a silent video as an animation, or a video it cannot play as a document.
   */
  fileUploadsAs(contentType: string, kind: FakeFileKind): void {
    this.fileAs.set(contentType.toLowerCase(), kind);
  }

  /** Uploads wait unanswered (not yet delivered) until `releaseUploads`. */
  holdUploads(): void {
    this.uploadGate ??= new Promise((resolve) => {
      this.openGate = resolve;
    });
  }

  releaseUploads(): void {
    this.openGate?.();
    this.uploadGate = null;
    this.openGate = null;
  }

  /** Upload requests waiting behind `holdUploads`. */
  heldUploads(): number {
    return this.held;
  }

  async close(): Promise<void> {
    this.watch?.stop();
    this.releaseUploads();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private bot(token: string, create = true): Bot {
    const botId = botIdOf(token);
    let bot = this.bots.get(token);
    if (!bot && create) {
      bot = {
        botId,
        revoked: false,
        floodUntil: 0,
        chatFloodUntil: new Map(),
        migrated: new Map(),
        faults: new Map(),
        failNext: { count: 0, status: 502 },
        echo: false,
        files: new Map(),
        nextMessageId: 1,
      };
      this.bots.set(token, bot);
    }
    return bot!;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.url ?? '');
    const answer = (status: number, payload: Record<string, unknown>) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    const token = match?.[1] ?? '';
    const method = match?.[2] ?? '';
    let fields: Map<string, Field>;
    try {
      fields = parseBody(req.headers['content-type'] ?? '', body);
    } catch {
      fields = new Map();
    }
    const chatId = fields.get('chat_id')?.value ?? null;
    const refuse = (status: number, description: string, parameters?: Record<string, number>) => {
      this.refused.push({
        at: this.now(),
        botId: match && /^\d+:[\w-]+$/.test(token) ? botIdOf(token) : null,
        method,
        chatId,
        status,
        description,
        retryAfter: parameters?.['retry_after'] ?? null,
      });
      answer(status, { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) });
    };

    // Telegram answers a path naming no bot (a malformed token) or no method with 404.
    if (!match || !/^\d+:[\w-]+$/.test(token)) return refuse(404, 'Not Found');
    const bot = this.bots.get(token);
    if (!bot || bot.revoked) return refuse(401, 'Unauthorized');
    if (bot.echo) return refuse(400, `Bad Request: fake echo of the request path ${req.url ?? ''}`);
    const update = this.updates.answer(bot.botId, method, fields);
    if (update) return 'result' in update ? answer(200, { ok: true, result: update.result }) : refuse(update.status, update.description);
    if (method === 'sendChatAction') {
      // As Telegram: an action is refused like a message under the bot's flood control.
      const action = fields.get('action')?.value ?? '';
      if (!chatId) return refuse(400, 'Bad Request: chat_id is empty');
      if (!['typing', 'upload_photo', 'upload_video', 'upload_voice', 'upload_document', 'record_voice'].includes(action))
        return refuse(400, 'Bad Request: wrong parameter action in request');
      const at = this.now();
      if (at < bot.floodUntil) return this.tooMany(refuse, bot.floodUntil - at);
      this.actions.push({ botId: bot.botId, chatId, action, at });
      return answer(200, { ok: true, result: true });
    }
    const mediaField = MEDIA_METHODS[method];
    if (method !== 'sendMessage' && !mediaField) return refuse(404, 'Not Found');
    if (req.method !== 'POST' && req.method !== 'GET') return refuse(404, 'Not Found');

    const media = mediaField ? fields.get(mediaField) : undefined;
    if (media?.file) {
      this.held++;
      try {
        while (this.uploadGate) await this.uploadGate;
      } finally {
        this.held--;
      }
    }

    if (!chatId) return refuse(400, 'Bad Request: chat_id is empty');
    const text = fields.get('text')?.value ?? null;
    if (method === 'sendMessage' && !text) return refuse(400, 'Bad Request: message text is empty');
    if (mediaField && !media) return refuse(400, `Bad Request: there is no ${mediaField} in the request`);
    if (mediaField && media && !media.file) {
      const kind = bot.files.get(media.value);
      if (kind === undefined) return refuse(400, 'Bad Request: wrong file identifier/HTTP URL specified');
      if (kind !== mediaField) return refuse(400, kindMismatch(kind, mediaField));
    }
    if (mediaField === 'photo' && media?.file) {
      const refusal = photoRefusal(media.file.bytes);
      if (refusal) return refuse(400, refusal);
    }
    if (method === 'sendMessage' && text!.length > MAX_TEXT) return refuse(400, 'Bad Request: message is too long');
    if (mediaField && (fields.get('caption')?.value.length ?? 0) > MAX_CAPTION) return refuse(400, 'Bad Request: message caption is too long');

    const now = this.now();
    if (now < bot.floodUntil) return this.tooMany(refuse, bot.floodUntil - now);
    const chatUntil = bot.chatFloodUntil.get(chatId) ?? 0;
    if (now < chatUntil) return this.tooMany(refuse, chatUntil - now);
    const movedTo = bot.migrated.get(chatId);
    if (movedTo !== undefined) return refuse(400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: Number(movedTo) });
    const fault = bot.faults.get(chatId);
    if (fault) return refuse(FAULT_ANSWERS[fault].status, FAULT_ANSWERS[fault].description);
    // Telegram takes an integer chat id or a channel's @username; anything else names no chat.
    if (!/^-?\d+$/.test(chatId) && !/^@\w{5,}$/.test(chatId)) return refuse(400, 'Bad Request: chat not found');
    if (bot.failNext.count > 0) {
      bot.failNext.count--;
      return refuse(bot.failNext.status, bot.failNext.status === 502 ? 'Bad Gateway' : 'Internal Server Error');
    }

    const messageId = bot.nextMessageId++;
    const caption = fields.get('caption')?.value ?? null;
    let fileId: string | null = null;
    let kind: FakeFileKind | null = null;
    const result: Record<string, unknown> = {
      message_id: messageId,
      date: Math.floor(now / 1000),
      chat: { id: /^-?\d+$/.test(chatId) ? Number(chatId) : chatId },
    };
    if (method === 'sendMessage') result['text'] = text;
    if (mediaField && media) {
      if (media.file) {
        kind = filedKind(mediaField, media.file.contentType, this.fileAs);
        fileId = `${kind}-${bot.botId}-${++this.fileSeq}`;
        bot.files.set(fileId, kind);
      } else {
        fileId = media.value;
        kind = mediaField;
      }
      if (caption) result['caption'] = caption;
      // A photo comes back in several sizes, the largest last; each size's file_id works.
      if (kind === 'photo') {
        const thumb = `${fileId}-thumb`;
        bot.files.set(thumb, 'photo');
        result['photo'] = [
          { file_id: thumb, width: 90, height: 90 },
          { file_id: fileId, width: 800, height: 800 },
        ];
      } else {
        result[kind] = { file_id: fileId, file_size: media.file?.bytes.length ?? 0 };
        // an animation is also listed as a document, for clients that know no animations
        if (kind === 'animation') result['document'] = result[kind];
      }
    }
    this.received.push({
      seq: this.received.length + 1,
      botId: bot.botId,
      method,
      chatId,
      messageId,
      text: method === 'sendMessage' ? text : null,
      caption,
      fileId,
      kind,
      upload: Boolean(media?.file),
      receivedAt: now,
      stampSlackMs: this.watch?.slackMs() ?? 0,
    });
    answer(200, { ok: true, result });
  }

  private tooMany(refuse: (status: number, description: string, parameters?: Record<string, number>) => void, remainingMs: number): void {
    const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
    refuse(429, `Too Many Requests: retry after ${seconds}`, { retry_after: seconds });
  }
}

function botIdOf(token: string): string {
  return token.split(':')[0]!;
}
