import { WHATSAPP_SHAPE } from '../platform-shapes.js';
import { newChatWaitMs, type ChatDirectorySink, type Clock, type SendFailure, type SendResult } from '@metronome/core';
import type { WAMediaUploadFunction } from '@whiskeysockets/baileys';
import { scrubPrepared, scrubResult } from '../secret-scrub.js';
import type { MediaContent, OutgoingMessage, OutgoingPart, PrepareResult, Transport, TransportAccount } from '../transport.js';
import { chatJid, whatsappMessageId } from './addressing.js';
import { proxyFailed } from '../proxy.js';
import { classifyWhatsAppFailure, DEFAULT_OVERLIMIT_BACKOFF, failureOf, isOverlimit, type OverlimitBackoff, type WhatsAppFailure } from './classify.js';
import type { SocketRefusal } from './connection.js';
import { directChatId, groupEntry, ownIds, sendingOf } from './directory-entries.js';
import { mediaMessage, prepareMedia } from './media.js';
import type { WhatsAppLogger, WhatsAppSocket } from './socket.js';
import type { WhatsAppSocketPool } from './socket-pool.js';
import { realTimers, type Timers } from './timers.js';

export interface WhatsAppTransportOptions {
  pool: WhatsAppSocketPool;
  clock: Clock;
  logger: WhatsAppLogger;
  /** SEND_TIMEOUT_MS: a send written to the socket and not answered by then is `unknown` */
  timeoutMs: number;
  timers?: Timers;
  uploadTimeoutMs?: number;
  /** how long a prepared media is reused before it is uploaded again (default 24 h) */
  mediaRefTtlMs?: number;
  handoverRetryMs?: number;
  /** How soon a job left to the replica holding the socket comes back, ms; the pool's handoverPatienceMs bounds how long before it asks for the socket. */
  affinityRetryMs?: number;
  overlimitBackoff?: OverlimitBackoff;
  upload?: (socket: WhatsAppSocket) => WAMediaUploadFunction;
}

type Attempt = { failure: WhatsAppFailure | null } | { held: SendFailure };

/**
 * WhatsApp through Baileys: the account's one socket (WhatsAppSocketPool), a message id derived from the idempotency key,
 * answers classified by classify.ts. Repeated `rate-overlimit` backs off longer each time (a streak in memory, reset by a delivery).
 */
export class WhatsAppTransport implements Transport {
  readonly platform = WHATSAPP_SHAPE.platform;
  private readonly overlimitStreak = new Map<string, number>();
  private readonly leftToHolder = new Map<string, { since: number; at: number }>();

  constructor(private readonly o: WhatsAppTransportOptions) {}

  // Every result's message has the process's secrets (the auth state's, auth-state.ts) scrubbed.
  async prepareMedia(account: TransportAccount, media: MediaContent): Promise<PrepareResult> {
    return scrubPrepared(await this.upload(account, media));
  }

  async send(account: TransportAccount, message: OutgoingMessage): Promise<SendResult> {
    return scrubResult(await this.deliver(account, message));
  }

  /** Presence `composing`, no `paused` after: the recipient's app ends it when the message arrives, and each presence is a frame. */
  async showTyping(account: TransportAccount, chatId: string, _part: OutgoingPart): Promise<void> {
    const jid = chatJid(chatId);
    if (!jid) return;
    const used = await this.o.pool
      .use(
        account.id,
        async (socket) => {
          await socket.sendPresenceUpdate('composing', jid);
        },
        account.proxy,
      )
      .catch((error: unknown) => ({ ok: false as const, error }));
    if (!used.ok) this.o.logger.debug({ accountId: account.id, refusal: used }, 'whatsapp typing not shown');
  }

  private async upload(account: TransportAccount, media: MediaContent): Promise<PrepareResult> {
    const used = await this.o.pool.use(
      account.id,
      async (socket): Promise<{ ref: string } | { failure: WhatsAppFailure }> => {
        try {
          const upload = this.o.upload?.(socket) ?? socket.waUploadToServer;
          return { ref: await prepareMedia(media, upload, this.o.logger, this.o.uploadTimeoutMs ?? 120_000) };
        } catch (error) {
          return { failure: failureOf(error) };
        }
      },
      account.proxy,
    );
    if (!used.ok) return { ok: false, result: this.refused(account.id, used) };
    if ('failure' in used.value) {
      const result = this.failed(account.id, used.value.failure);
      // An upload is never ambiguous in effect: a repeated upload only costs bandwidth.
      return { ok: false, result: result.kind === 'ambiguous' ? { kind: 'retriable', code: result.code, message: result.message } : result };
    }
    return { ok: true, ref: used.value.ref, expiresAt: new Date(this.o.clock.now() + (this.o.mediaRefTtlMs ?? 24 * 3_600_000)) };
  }

  async readiness(accountId: string): Promise<{ ready: true } | { ready: false; retryAfterMs: number; reason: string }> {
    const now = this.o.clock.now();
    const patience = this.o.pool.handedOn.patienceMs;
    const retryMs = this.o.affinityRetryMs ?? 500;
    if (!this.handedOn(accountId, now) && !(await this.o.pool.heldElsewhere(accountId))) {
      this.leftToHolder.delete(accountId);
      return { ready: true };
    }
    // Patience runs only while jobs come back here back to back (a left job returns within 1.5 retries): a gap means
    // the holder served the account meanwhile, so a run its holder keeps sending never moves the socket (issue 53).
    const last = this.leftToHolder.get(accountId);
    const since = last && now - last.at <= 4 * retryMs ? last.since : now;
    if (now - since >= patience) {
      this.leftToHolder.delete(accountId);
      return { ready: true };
    }
    if (!last && this.leftToHolder.size > 10_000) this.leftToHolder.clear();
    this.leftToHolder.set(accountId, { since, at: now });
    return { ready: false, retryAfterMs: retryMs, reason: 'socket open on another replica' };
  }

  /** What this replica just handed to another is that one's to take, within patience: its jobs go there too. */
  private handedOn(accountId: string, now: number): boolean {
    return this.o.pool.handedOn.recent(accountId, now) && !this.o.pool.isOpen(accountId);
  }

  /** The account holder moves an idle socket to another replica (issue 53): closed here, its lease let go; false when in use. */
  async letGo(accountId: string, handOver = true): Promise<boolean> {
    return this.o.pool.letGo(accountId, handOver);
  }

  private async deliver(account: TransportAccount, message: OutgoingMessage): Promise<SendResult> {
    const jid = chatJid(message.chatId);
    if (!jid) return { kind: 'rejected', code: 'chat_not_found', message: 'not a WhatsApp chat id (expected a JID or a phone number in international format)' };
    const part = message.part;
    const media = part.type === 'media' ? mediaMessage(part.mediaRef, part.caption) : null;
    if (part.type === 'media' && !media) return { kind: 'rejected', code: 'media_ref_invalid', message: 'the prepared media reference is not readable' };
    const messageId = whatsappMessageId(message.idempotencyKey);
    const sentContent = part.type === 'text' ? { conversation: part.text } : media!;

    // The timeout starts at the write (write-marks.ts): what comes before it is not sending, and fails as retriable.
    const mark = this.o.pool.writes.expect(account.id, messageId);
    void mark.written.then(() => this.o.pool.statuses.track(account.id, messageId, message.chatId));
    // This replica closing the socket before the write (a stop, a hand-over) answers at once as the hand-over's wait, no
    // attempt counted; WhatsApp closing it stays retriable and counted, so a platform that keeps closing still fails.
    let cutHere!: () => void;
    const cut = new Promise<'cut'>((resolve) => (cutHere = () => mark.isWritten() || resolve('cut')));
    const attempt = this.o.pool.use(
      account.id,
      async (socket, whenClosedHere): Promise<Attempt> => {
        const unset = whenClosedHere!(cutHere);
        try {
          const [held] = await Promise.all([this.heldBeforeWrite(account.id, jid, socket), this.o.pool.warmChat(account.id, jid)]);
          if (held) return { held };
          const sent = await (part.type === 'text'
            ? socket.sendMessage(jid, { text: part.text, linkPreview: null }, { messageId })
            : socket.relayMessage(jid, media!, { messageId }));
          // kept for a recipient whose device asks for it again (Baileys' getMessage)
          this.o.pool.sent.remember(account.id, messageId, typeof sent === 'object' && sent?.message ? sent.message : sentContent);
          return { failure: null };
        } catch (error) {
          const failure = failureOf(error);
          // Baileys commits the keys after writing (relayMessage's key transaction): a refused commit leaves the message sent.
          if (failure.source !== 'keys-unsaved' || !mark.isWritten()) return { failure };
          this.o.pool.sent.remember(account.id, messageId, sentContent);
          this.o.logger.warn({ accountId: account.id, messageId }, 'whatsapp message written; its keys wait for the store');
          return { failure: null };
        } finally {
          unset();
        }
      },
      account.proxy,
    );
    let timer: { cancel(): void } | undefined;
    const timers = this.o.timers ?? realTimers;
    const timeout = mark.written.then(() => new Promise<'timeout'>((resolve) => (timer = timers.setTimeout(() => resolve('timeout'), this.o.timeoutMs))));
    const outcome = await Promise.race([attempt, timeout, cut]);
    timer?.cancel();
    mark.cancel();

    if (outcome === 'cut') return this.handedOver();
    if (outcome === 'timeout')
      return this.failed(account.id, { source: 'timeout', message: `no answer within ${this.o.timeoutMs} ms after the message was written` });
    if (!outcome.ok) return this.refused(account.id, outcome);
    if ('held' in outcome.value) return outcome.value.held;
    if (outcome.value.failure) return this.failed(account.id, outcome.value.failure, mark.isWritten());
    this.overlimitStreak.delete(account.id);
    const direct = jid.endsWith('@g.us') ? null : directChatId(jid);
    if (direct) this.o.pool.directory.direct(account.id, direct, null);
    return { kind: 'delivered', messageId };
  }

  /** Why a message to `jid` is not written: a new chat the new-chat limits hold, or an admins-only group the account cannot post in. */
  private async heldBeforeWrite(accountId: string, jid: string, socket: WhatsAppSocket): Promise<SendFailure | null> {
    if (jid.endsWith('@g.us')) {
      const meta = await this.o.pool.directory.lookup(accountId, jid);
      if (sendingOf(groupEntry(meta, ownIds(socket.user)).standing).cannotSendReason === 'announce_only')
        return { kind: 'rejected', code: 'announce_only', message: "only the group's admins may post in it, and the account is not one" };
      return null;
    }
    const hold = await this.o.pool.newChats.hold(accountId);
    if (!hold || !(await this.o.pool.newChats.isNew(accountId, jid))) return null;
    return { kind: 'chat-wait', code: hold.code, retryAfterMs: newChatWaitMs(hold, new Date(this.o.clock.now())) };
  }

  /** Groups only, by one `groupFetchAllParticipating` on the socket; one-to-one chats come from sends and incoming messages. */
  async syncDirectory(account: TransportAccount, sink: ChatDirectorySink, signal?: AbortSignal): Promise<void> {
    await this.o.pool.directory.sync(account.id, sink, signal);
  }

  async close(): Promise<void> {
    await this.o.pool.close();
  }

  private failed(accountId: string, failure: WhatsAppFailure, written = true): SendFailure {
    let streak = this.overlimitStreak.get(accountId) ?? 0;
    if (isOverlimit(failure)) this.overlimitStreak.set(accountId, ++streak);
    return classifyWhatsAppFailure(failure, streak, this.o.overlimitBackoff ?? DEFAULT_OVERLIMIT_BACKOFF, written);
  }

  /** Not the platform's wait: the socket is being handed over between replicas (or this one stops). */
  private handedOver(): SendFailure {
    return { kind: 'account-wait', code: 'socket_handover', retryAfterMs: this.o.handoverRetryMs ?? 3_000 };
  }

  private refused(accountId: string, refusal: SocketRefusal): SendFailure {
    switch (refusal.reason) {
      case 'busy':
      case 'closed-here':
        return this.handedOver();
      case 'keys-unsaved':
        // Not the platform's wait: the socket stays closed until PostgreSQL takes the keys (unsaved-keys.ts).
        return { kind: 'account-wait', code: 'keys_unsaved', retryAfterMs: this.o.handoverRetryMs ?? 3_000 };
      case 'not-paired':
        return {
          kind: 'account-unavailable',
          code: 'not_paired',
          message: 'the account has no paired WhatsApp device: pair it with POST /v1/accounts/{id}/pair',
        };
      case 'connect-failed':
        return this.failed(accountId, refusal.failure, false);
      case 'proxy-failed':
        // The proxy's refusal, not WhatsApp's: the account waits (proxy_failed).
        return proxyFailed();
    }
  }
}
