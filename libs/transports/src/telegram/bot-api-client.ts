import { HttpPool } from '../http-pool.js';
import { postOnce, type OversizedAnswer, type RequestFailure } from '../post-once.js';
import { RequestTargets } from '../request-target.js';

export interface BotApiClientOptions {
  /** TELEGRAM_API_URL (a path is kept: a proxy may serve the API under one) */
  baseUrl: string;
  timeoutMs: number;
  maxSockets?: number;
}

/** An answer's status and JSON body (null if not JSON); `written`: the whole request had left, so a 5xx is ambiguous. */
export interface BotApiAnswer {
  status: number;
  body: Record<string, unknown> | null;
  written: boolean;
}

export type BotApiFailure = RequestFailure;

/** An answer over 64 KiB: only its status was read. */
export type BotApiOversized = OversizedAnswer & { written: boolean };

const TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,200}$/;

/** Whether `token` has the form of a bot token (`<bot id>:<secret>`), so it cannot change the request's path. */
export function isBotToken(token: unknown): token is string {
  return typeof token === 'string' && TOKEN.test(token);
}

export function botApiUrl(base: URL, token: string, method: string): URL {
  const dir = base.href.endsWith('/') ? base : new URL(`${base.href}/`);
  // './' keeps `bot<id>:` from reading as a URL scheme.
  return new URL(`./bot${token}/${encodeURIComponent(method)}`, dir);
}

/**
 * Calls Bot API methods through postOnce, not fetch: whether a failed request was fully written decides "not sent" from "maybe
 * sent". The token is in every URL, so no URL is logged and returned text has it scrubbed.
 */
export class BotApiClient {
  private readonly pool: HttpPool;
  private readonly base: URL;
  private readonly targets = new RequestTargets();

  constructor(private readonly options: BotApiClientOptions) {
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.pool = new HttpPool(this.base, options.maxSockets ?? 256);
  }

  /** Calls `method` with a ready body (JSON or multipart). Never throws. */
  call(
    token: string,
    method: string,
    body: { contentType: string; bytes: Buffer },
    onWritten?: () => void,
  ): Promise<BotApiAnswer | BotApiFailure | BotApiOversized> {
    if (!isBotToken(token)) {
      return Promise.resolve({ failure: true, code: 'bot_token_invalid', written: false, message: 'the bot token does not have the form <bot id>:<secret>' });
    }
    const scrub = (text: string) =>
      text
        .split(token)
        .join('<bot token>')
        .split(token.slice(token.indexOf(':') + 1))
        .join('<bot token>');
    let written = false;
    const wrote = () => {
      written = true;
      onWritten?.();
    };
    const sent = postOnce<BotApiAnswer>({
      target: () => this.targets.get(`${method} ${token}`, () => botApiUrl(this.base, token, method)),
      pool: this.pool,
      headers: { 'content-type': body.contentType },
      body: body.bytes,
      timeoutMs: this.options.timeoutMs,
      answer: (status, bytes) => {
        let parsed: Record<string, unknown> | null = null;
        try {
          const value: unknown = JSON.parse(bytes.toString('utf8'));
          if (value && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>;
        } catch {
          parsed = null;
        }
        return { status, body: parsed, written };
      },
      // node:http's message for a request it cannot build may quote the URL, with the token
      notBuiltCode: 'network_error',
      scrub,
      onWritten: wrote,
    });
    return sent.then((answer) => ('oversized' in answer ? { ...answer, written } : answer));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
