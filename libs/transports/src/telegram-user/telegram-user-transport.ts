import { TELEGRAM_USER_SHAPE } from '../platform-shapes.js';
import {
  RESTRICTING_CODES,
  systemClock,
  type ProxySettings,
  type ChatDirectorySink,
  type Clock,
  type SendFailure,
  type SendResult,
  type TelegramPeerStore,
} from '@metronome/core';
import { Api } from 'telegram';
import { proxyFailed, ProxyFailedError, proxyOf } from '../proxy.js';
import { registerCredentials, scrubResult } from '../secret-scrub.js';
import type { MediaContent, OutgoingMessage, OutgoingPart, PrepareResult, Transport, TransportAccount } from '../transport.js';
import { ClosedHere, ConnectionElsewhere, ConnectTimeout, withTimeout, type UserClientPool } from './client-pool.js';
import { cachedPeers, MemoryPeerStore, PeerUnknown, resolvePeer } from './peers.js';
import { uploadParts } from './upload.js';
import type { UserClient } from './user-client.js';
import { syncUserDirectory } from './directory-sync.js';
import { mediaRefOf, inputMediaOf, uploadedMedia } from './media-ref.js';
import { randomIdOf } from './random-id.js';
import { classifyUserError } from './user-errors.js';

export interface TelegramUserTransportOptions {
  pool: UserClientPool;
  clock?: Clock;
  peers?: TelegramPeerStore;
  /** the longest a request may go unanswered (SEND_TIMEOUT_MS); its client is then torn down */
  timeoutMs?: number;
}

class RequestTimeout extends Error {}

/** Telegram's file references age: a kept media reference is renewed after this. */
const MEDIA_REF_DAYS = 7;

/**
 * A Telegram user account (MTProto through GramJS). Each part's random_id is fixed by its idempotency key, so an `unknown`
 * send is settled by sending again (`platform_deduplicates`). A media is uploaded once per account and sent by reference.
 */
export class TelegramUserTransport implements Transport {
  readonly platform = TELEGRAM_USER_SHAPE.platform;
  readonly textLimits = TELEGRAM_USER_SHAPE.textLimits;
  readonly typingLastsMs = TELEGRAM_USER_SHAPE.typingLastsMs;
  private readonly clock: Clock;
  private readonly peers: TelegramPeerStore;
  private readonly timeoutMs: number;

  constructor(private readonly o: TelegramUserTransportOptions) {
    this.clock = o.clock ?? systemClock;
    this.peers = o.peers ? cachedPeers(o.peers, () => this.clock.now()) : new MemoryPeerStore();
    this.timeoutMs = o.timeoutMs ?? 15_000;
  }

  /** Bounded by the timeout: GramJS never fails requests in flight on a dead connection, so a silent client is torn down. */
  private async bounded<T>(accountId: string, work: Promise<T>): Promise<T> {
    try {
      return await withTimeout(work, this.timeoutMs, () => new RequestTimeout(`Telegram did not answer within ${this.timeoutMs} ms`));
    } catch (error) {
      if (error instanceof RequestTimeout || error instanceof ConnectTimeout) void this.o.pool.drop(accountId, false);
      throw error;
    }
  }

  async readiness(accountId: string): Promise<{ ready: true } | { ready: false; retryAfterMs: number; reason: string }> {
    if (await this.o.pool.heldElsewhere(accountId))
      return { ready: false, retryAfterMs: 2_000, reason: "another sender holds the account's Telegram connection" };
    return { ready: true };
  }

  /** Opens the account's connection and keeps it (always-connected accounts) unless another sender holds it; false when none opened. */
  async hold(account: TransportAccount): Promise<boolean> {
    registerCredentials(account);
    const session = sessionOf(account);
    if (!session || (await this.o.pool.heldElsewhere(account.id))) return false;
    // a holder takes free accounts only: it never asks the account's holder to hand it over
    return this.bounded(account.id, this.o.pool.client(account.id, session, proxyFor(account), false)).then(
      () => true,
      () => false,
    );
  }

  async prepareMedia(account: TransportAccount, media: MediaContent): Promise<PrepareResult> {
    registerCredentials(account);
    const session = sessionOf(account);
    if (!session) return { ok: false, result: noSession() };
    try {
      const client = await this.bounded(account.id, this.o.pool.client(account.id, session, proxyFor(account)));
      const file = await uploadParts({ ...client, invoke: (r) => this.bounded(account.id, client.invoke(r)) }, media.filename ?? 'file', media.bytes);
      const answer = await this.bounded(
        account.id,
        client.invoke(new Api.messages.UploadMedia({ peer: new Api.InputPeerSelf(), media: uploadedMedia(file, media) })),
      );
      const ref = mediaRefOf(answer);
      if (!ref)
        return { ok: false, result: { kind: 'retriable', code: 'upload_unreadable', message: 'Telegram answered uploadMedia without a photo or document' } };
      return { ok: true, ref, expiresAt: new Date(this.clock.now() + MEDIA_REF_DAYS * 86_400_000) };
    } catch (error) {
      const result = this.failure(account.id, error);
      if (result.kind === 'delivered' || result.kind === 'ambiguous')
        return { ok: false, result: { kind: 'retriable', code: 'upload_failed', message: 'the upload did not finish' } };
      return { ok: false, result };
    }
  }

  async send(account: TransportAccount, message: OutgoingMessage): Promise<SendResult> {
    registerCredentials(account);
    const session = sessionOf(account);
    if (!session) return noSession();
    let client: UserClient | null = null;
    let peer: Api.TypeInputPeer;
    try {
      client = await this.bounded(account.id, this.o.pool.client(account.id, session, proxyFor(account)));
      peer = await this.bounded(account.id, resolvePeer(client, this.peers, account.id, message.chatId, new Date(this.clock.now())));
    } catch (error) {
      if (error instanceof PeerUnknown) return { kind: 'rejected', code: 'chat_not_found', message: error.message };
      if (error instanceof ClosedHere || (client && this.o.pool.closedHere(client))) return handedOver();
      // Nothing left for the chat yet: a failure here is never `ambiguous`.
      const result = this.failure(account.id, error);
      return scrubResult(
        result.kind === 'ambiguous' || result.kind === 'delivered'
          ? { kind: 'retriable', code: 'not_connected', message: result.kind === 'ambiguous' ? result.message : 'not sent' }
          : result,
      );
    }
    const randomId = randomIdOf(message.idempotencyKey);
    const { part } = message;
    // A forum topic is posted into as a reply to its top message (Telegram's api/forum); top_msg_id is for replies within it.
    const replyTo = message.threadId ? new Api.InputReplyToMessage({ replyToMsgId: message.threadId }) : undefined;
    const request =
      part.type === 'text'
        ? new Api.messages.SendMessage({ peer, message: part.text, randomId, ...(replyTo && { replyTo }) })
        : new Api.messages.SendMedia({ peer, media: inputMediaOf(part.mediaRef), message: part.caption ?? '', randomId, ...(replyTo && { replyTo }) });
    // A connection this replica closed (a stop, a hand-over) takes no request: GramJS refuses it unwritten, so the send is the
    // hand-over's short wait, no attempt counted. A request begun before the close keeps its own answer.
    if (this.o.pool.closedHere(client)) return handedOver();
    try {
      const answer = await this.bounded(account.id, client.invoke(request));
      return { kind: 'delivered', messageId: messageIdOf(answer, randomId.toString()) };
    } catch (error) {
      return scrubResult(this.failure(account.id, error));
    }
  }

  /** messages.setTyping by the kind about to be sent; a refusal is ignored. */
  async showTyping(account: TransportAccount, chatId: string, part: OutgoingPart, threadId?: number): Promise<void> {
    const session = sessionOf(account);
    if (!session) return;
    try {
      const client = await this.bounded(account.id, this.o.pool.client(account.id, session, proxyFor(account)));
      const peer = await this.bounded(account.id, resolvePeer(client, this.peers, account.id, chatId, new Date(this.clock.now())));
      const action =
        part.type === 'text'
          ? new Api.SendMessageTypingAction()
          : part.contentType.startsWith('image/')
            ? new Api.SendMessageUploadPhotoAction({ progress: 0 })
            : new Api.SendMessageUploadDocumentAction({ progress: 0 });
      // in a forum topic, shown there (top_msg_id names the topic for setTyping)
      await this.bounded(account.id, client.invoke(new Api.messages.SetTyping({ peer, action, ...(threadId && { topMsgId: threadId }) })));
    } catch {
      // cosmetic: the message goes all the same
    }
  }

  async syncDirectory(account: TransportAccount, sink: ChatDirectorySink): Promise<void> {
    const session = sessionOf(account);
    const at = () => new Date(this.clock.now());
    if (!session) return sink.syncState(account.id, { status: 'failed', reason: 'the account is not signed in to Telegram' }, at());
    try {
      const client = await this.bounded(account.id, this.o.pool.client(account.id, session, proxyFor(account)));
      await syncUserDirectory(client, account.id, sink, at, this.peers);
    } catch (error) {
      const reason =
        error instanceof ConnectionElsewhere
          ? 'another sender holds the account: sync again'
          : error instanceof ProxyFailedError
            ? `the account's proxy ${error.message}`
            : `Telegram refused: ${String((error as Error).message).slice(0, 200)}`;
      await sink.syncState(account.id, { status: 'failed', reason }, at());
    }
  }

  private failure(accountId: string, error: unknown): SendResult {
    if (error instanceof ConnectionElsewhere) return { kind: 'retriable', code: 'connection_elsewhere', message: error.message };
    if (error instanceof ProxyFailedError) return proxyFailed();
    // the request was written and never answered: it may have been taken (settled by the random_id)
    if (error instanceof RequestTimeout) return { kind: 'ambiguous', code: 'send_timeout', message: error.message };
    const result = classifyUserError(error);
    // a signed-out session's connection is of no more use; a restricted account's still is
    if (result.kind === 'account-unavailable' && !RESTRICTING_CODES.includes(result.code)) void this.o.pool.drop(accountId, false);
    return result;
  }

  async close(): Promise<void> {
    await this.o.pool.close();
  }
}

function proxyFor(account: TransportAccount): { url: string; settings: ProxySettings } | null {
  const settings = proxyOf(account.proxy, 'telegram_user');
  return settings && { url: account.proxy!, settings };
}

function sessionOf(account: TransportAccount): string | null {
  const s = account.credentials?.['session'];
  return typeof s === 'string' && s !== '' ? s : null;
}

function handedOver(): SendFailure {
  return { kind: 'account-wait', code: 'socket_handover', retryAfterMs: 2_000 };
}

function noSession(): SendFailure {
  return {
    kind: 'account-unavailable',
    code: 'not_signed_in',
    message: 'the account is not signed in to Telegram: sign in again (POST /v1/accounts/{id}/telegram-sign-in)',
  };
}

function messageIdOf(answer: unknown, randomId: string): string {
  if (answer instanceof Api.UpdateShortSentMessage) return String(answer.id);
  const updates = (answer as { updates?: unknown[] } | null)?.updates ?? [];
  const ids = updates.filter((u): u is Api.UpdateMessageID => u instanceof Api.UpdateMessageID);
  const id = ids.find((u) => u.randomId?.toString() === randomId) ?? ids[0];
  return id ? String(id.id) : '';
}
