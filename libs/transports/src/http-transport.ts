import { classifyHttpAnswer, classifyTransportFailure, type ChatDirectorySink, type SendFailure, type SendResult } from '@metronome/core';
import { classifyOversizedAnswer } from './bounded-answer.js';
import { syncHttpDirectory } from './http-directory.js';
import { HttpPool } from './http-pool.js';
import { encodeIdempotencyKey } from './idempotency-key.js';
import { postOnce, type OversizedAnswer, type RequestFailure } from './post-once.js';
import { RequestTargets } from './request-target.js';
import { registerCredentials, scrubPrepared, scrubResult } from './secret-scrub.js';
import type { MediaContent, OutgoingMessage, PrepareResult, Transport, TransportAccount } from './transport.js';

export interface HttpTransportOptions {
  baseUrl: string;
  timeoutMs: number;
  mediaRefTtlMs?: number;
  maxSockets?: number;
}

interface Answer {
  status: number;
  body: unknown;
}

/** RFC 6750 token characters, as the control API accepts: it fits a header as is. */
const API_KEY = /^[A-Za-z0-9._~+/-]{16,512}=*$/;

function apiKeyOf(account: TransportAccount): string | SendFailure {
  const key = account.credentials?.['apiKey'];
  if (typeof key === 'string' && API_KEY.test(key)) return key;
  // Nothing is sent without the key: the platform would refuse it, or take it from whoever registered the id.
  return {
    kind: 'account-unavailable',
    code: 'api_key_missing',
    message: 'the http account has no API key: give one with PATCH /v1/accounts/{id} {"credentials": {"apiKey": "…"}}',
  };
}

/**
 * The HTTP platform protocol (CONTRACT §5), through postOnce: whether a failed send was fully written decides `unknown`, which
 * fetch does not reveal. Every request carries the account's Bearer key; every result's message is scrubbed.
 */
export class HttpTransport implements Transport {
  readonly platform = 'http' as const;
  readonly mediaUpload = 'prepare' as const;
  readonly reportsWrites = true;
  private readonly pool: HttpPool;
  private readonly base: URL;
  private readonly targets = new RequestTargets();

  constructor(private readonly options: HttpTransportOptions) {
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.pool = new HttpPool(this.base, options.maxSockets ?? 256);
  }

  async prepareMedia(account: TransportAccount, media: MediaContent): Promise<PrepareResult> {
    registerCredentials(account);
    return scrubPrepared(await this.upload(account, media));
  }

  async send(account: TransportAccount, message: OutgoingMessage): Promise<SendResult> {
    registerCredentials(account);
    return scrubResult(await this.deliver(account, message));
  }

  async syncDirectory(account: TransportAccount, sink: ChatDirectorySink, signal?: AbortSignal): Promise<void> {
    registerCredentials(account);
    const apiKey = (a: TransportAccount) => {
      const key = apiKeyOf(a);
      return typeof key === 'string' ? key : { message: 'message' in key ? key.message : key.code };
    };
    await syncHttpDirectory({ pool: this.pool, base: this.base, timeoutMs: this.options.timeoutMs, apiKey }, account, sink, signal);
  }

  private async upload(account: TransportAccount, media: MediaContent): Promise<PrepareResult> {
    const answer = await this.request(account, 'media', media.bytes, {
      'content-type': media.contentType,
      'x-media-sha256': media.sha256,
    });
    if ('oversized' in answer) {
      const r = classifyOversizedAnswer(answer.status, 'the platform');
      return { ok: false, result: r.kind === 'ambiguous' ? { kind: 'retriable', code: r.code, message: r.message } : r };
    }
    if ('kind' in answer) return { ok: false, result: answer };
    if ('failure' in answer) {
      const r = classifyTransportFailure(answer.code, false, answer.message);
      // An upload is never ambiguous in effect: a repeated upload only costs bandwidth.
      return { ok: false, result: r.kind === 'ambiguous' ? { kind: 'retriable', code: r.code, message: r.message } : r };
    }
    const body = answer.body as { mediaRef?: unknown } | null;
    if (answer.status === 200 && body && typeof body.mediaRef === 'string') {
      return { ok: true, ref: body.mediaRef, expiresAt: new Date(Date.now() + (this.options.mediaRefTtlMs ?? 23 * 3_600_000)) };
    }
    const r = classifyHttpAnswer(answer.status === 200 ? 502 : answer.status, answer.body);
    return { ok: false, result: r.kind === 'delivered' ? { kind: 'retriable', code: 'bad_upload_answer', message: 'no mediaRef' } : r };
  }

  private async deliver(account: TransportAccount, message: OutgoingMessage): Promise<SendResult> {
    const part =
      message.part.type === 'text'
        ? { type: 'text', text: message.part.text }
        : { type: 'media', mediaRef: message.part.mediaRef, ...(message.part.caption ? { caption: message.part.caption } : {}) };
    const body = Buffer.from(JSON.stringify({ chatId: message.chatId, part, partIndex: message.partIndex, partCount: message.partCount }));
    const answer = await this.request(
      account,
      'messages',
      body,
      {
        'content-type': 'application/json',
        'idempotency-key': encodeIdempotencyKey(message.idempotencyKey),
      },
      message.onWritten,
    );
    if ('oversized' in answer) return classifyOversizedAnswer(answer.status, 'the platform');
    if ('kind' in answer) return answer;
    if ('failure' in answer) return classifyTransportFailure(answer.code, answer.written, answer.message);
    return classifyHttpAnswer(answer.status, answer.body);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private request(
    account: TransportAccount,
    what: 'media' | 'messages',
    body: Buffer,
    headers: Record<string, string>,
    onWritten?: () => void,
  ): Promise<Answer | RequestFailure | OversizedAnswer | SendFailure> {
    if (!account.externalId) {
      return Promise.resolve({ failure: true, code: 'no_external_id', written: false, message: 'http account has no externalId' });
    }
    const externalId = account.externalId;
    const apiKey = apiKeyOf(account);
    if (typeof apiKey !== 'string') return Promise.resolve(apiKey);
    // One encoded path segment under the configured base: the account id cannot redirect the request.
    return postOnce<Answer>({
      target: () => this.targets.get(`${what} ${externalId}`, () => new URL(`v1/accounts/${encodeURIComponent(externalId)}/${what}`, this.base)),
      pool: this.pool,
      headers: { ...headers, authorization: `Bearer ${apiKey}` },
      body,
      timeoutMs: this.options.timeoutMs,
      answer: readAnswer,
      notBuiltCode: 'request_not_built',
      ...(onWritten && { onWritten }),
    });
  }
}

function readAnswer(status: number, bytes: Buffer): Answer {
  const text = bytes.toString('utf8');
  try {
    return { status, body: text ? JSON.parse(text) : null };
  } catch {
    return { status, body: { error: `http_${status}`, message: text.slice(0, 200) } };
  }
}
