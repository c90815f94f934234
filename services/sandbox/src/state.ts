// The fake platform's memory and every accept/reject decision. Pure: `now` (ms) is a parameter everywhere.
import { randomUUID } from 'node:crypto';
import { checkPace, maxInWindow, slowModeWaitMs, toRetryAfterSeconds } from './limits.js';
import type { Limits } from './limits.js';
import { MediaStore } from './media-store.js';
import { chatErrorStatus, emptyRejected, newAccountState, newChatState, type AccountState, type ChatState } from './account-state.js';
import { banBreach, NO_BAN, type BanRules } from './ban-model.js';
import { seededRandom } from './random.js';
import { SandboxDirectories } from './directory.js';
import type {
  AccountPatch,
  Answer,
  ChatPatch,
  ConfigPatch,
  DuplicateKey,
  MediaRecord,
  PlatformErrorCode,
  ReceivedMessage,
  Rejection,
  RejectReason,
  SendRequest,
} from './platform-types.js';

export { MEDIA_REF_TTL_MS } from './media-store.js';

type Attempt = { account: string; chatId?: string | null; idempotencyKey?: string | null; partIndex?: number | null };
/** How a request is refused; `message` goes in the answer's body only (the HTTP transport reads it). */
type Refusal = { reason: RejectReason; status: Answer['status']; error: PlatformErrorCode; detail?: string; message?: string };

export class SandboxState {
  private limits: Limits;
  private seed: number;
  private random: () => number;
  private accounts = new Map<string, AccountState>();
  private media = new MediaStore();
  private received: ReceivedMessage[] = [];
  private rejected: Rejection[] = [];
  private rejectedCounts = emptyRejected();
  private duplicates: DuplicateKey[] = [];
  readonly directories: SandboxDirectories;

  constructor(
    private readonly initial: Limits,
    private readonly initialSeed: number,
    private readonly newMediaRef: () => string = () => `m-${randomUUID()}`,
  ) {
    this.limits = { ...initial };
    this.seed = initialSeed;
    this.random = seededRandom(initialSeed);
    this.directories = new SandboxDirectories(initialSeed);
  }

  /** Back to the start-up limits, with nothing received. */
  reset(): void {
    this.limits = { ...this.initial };
    this.seed = this.initialSeed;
    this.random = seededRandom(this.initialSeed);
    this.accounts.clear();
    this.media.forget();
    this.received = [];
    this.rejected = [];
    this.rejectedCounts = emptyRejected();
    this.duplicates = [];
    this.directories.reset(this.initialSeed);
  }

  config(): Limits & { seed: number } {
    return { ...NO_BAN, ...this.limits, seed: this.seed };
  }

  updateConfig(patch: ConfigPatch): Limits & { seed: number } {
    const { seed, ...limits } = patch;
    this.limits = { ...this.limits, ...limits };
    if (seed !== undefined) {
      this.seed = seed;
      this.random = seededRandom(seed);
    }
    return this.config();
  }

  configureAccount(account: string, patch: AccountPatch) {
    const a = this.account(account);
    if (patch.maxPerMinute !== undefined) a.maxPerMinute = patch.maxPerMinute;
    if (patch.burst !== undefined) a.burst = patch.burst;
    if (patch.slowModeSeconds !== undefined) a.slowModeSeconds = patch.slowModeSeconds;
    if (patch.deduplicates !== undefined) a.deduplicates = patch.deduplicates;
    // Lifting `unauthorized` also lifts a ban: how a test gives a banned number back.
    if (patch.unauthorized !== undefined) {
      a.unauthorized = patch.unauthorized;
      if (!patch.unauthorized) a.banned = null;
    }
    for (const rule of ['banHourlyCap', 'banDailyCap', 'banMinGapMs'] as const) if (patch[rule] !== undefined) a.ban[rule] = patch[rule];
    if (patch.floodWaitSeconds !== undefined) {
      a.pendingFloodWaitSeconds = patch.floodWaitSeconds || null;
      a.blockedUntil = 0;
    }
    return this.accountView(a);
  }

  configureChat(account: string, chatId: string, patch: ChatPatch) {
    const c = this.chat(this.account(account), chatId);
    if (patch.error !== undefined) c.error = patch.error;
    if (patch.slowModeSeconds !== undefined) c.slowModeSeconds = patch.slowModeSeconds;
    if (patch.failNext !== undefined) c.failNext = patch.failNext;
    if (patch.hangNextMs !== undefined) c.hangNextMs = patch.hangNextMs;
    return this.chatView(c);
  }

  /** `POST /v1/accounts/:account/media`; `sha256` is what the body hashes to, `declaredSha256` the header. */
  upload(input: { account: string; declaredSha256: string | undefined; sha256: string; contentType: string; size: number }, now: number): Answer {
    const a = this.account(input.account);
    const base = { account: a.account, chatId: null, idempotencyKey: null, partIndex: null };
    if (a.unauthorized) return this.reject(base, 'unauthorized', 401, 'account_unauthorized', now, 0);
    if (input.declaredSha256?.toLowerCase() !== input.sha256) {
      const detail = input.declaredSha256 === undefined ? 'X-Media-Sha256 header missing' : 'X-Media-Sha256 does not match the body';
      return this.reject(base, 'invalid', 400, 'message_invalid', now, 0, { detail });
    }
    const mediaRef = this.newMediaRef();
    this.media.add({ mediaRef, sha256: input.sha256, contentType: input.contentType, size: input.size, account: a.account, uploadedAt: now });
    a.uploads.set(input.sha256, (a.uploads.get(input.sha256) ?? 0) + 1);
    return { status: 200, body: { mediaRef }, hangMs: 0 };
  }

  /** `GET /v1/accounts/:account/chats`: a page of the account's directory; 404 when it has none. */
  directoryPage(account: string, cursor: string | undefined, now: number): Answer {
    const a = this.account(account);
    const base = { account: a.account, chatId: null, idempotencyKey: null, partIndex: null };
    if (a.unauthorized) return this.reject(base, 'unauthorized', 401, 'account_unauthorized', now, 0);
    const page = this.directories.page(a.account, cursor);
    if (page === 'bad-cursor') return this.reject(base, 'invalid', 400, 'message_invalid', now, 0, { detail: 'cursor: not one this platform returned' });
    if (page === null) return { status: 404, body: { error: 'not_found' }, hangMs: 0 };
    return { status: 200, body: page, hangMs: 0 };
  }

  /** Records a send the HTTP layer found malformed (bad JSON, missing Idempotency-Key). */
  rejectInvalid(attempt: Attempt, detail: string, now: number): Answer {
    return this.refuse(attempt, { reason: 'invalid', status: 400, error: 'message_invalid', detail }, now);
  }

  /** Records a request refused before the platform looked at it: malformed, a missing or wrong API key, a fake fault. */
  refuse(attempt: Attempt, how: Refusal, now: number): Answer {
    const base = {
      account: this.account(attempt.account).account,
      chatId: attempt.chatId ?? null,
      idempotencyKey: attempt.idempotencyKey ?? null,
      partIndex: attempt.partIndex ?? null,
    };
    const { reason, status, error, ...extra } = how;
    return this.reject(base, reason, status, error, now, 0, extra);
  }

  /** `POST /v1/accounts/:account/messages`, checks in the order a platform would apply them. */
  send(req: SendRequest, now: number, stampSlackMs = 0): Answer {
    const a = this.account(req.account);
    const c = this.chat(a, req.chatId);
    const hangMs = c.hangNextMs;
    c.hangNextMs = 0;
    const base = { account: a.account, chatId: c.chatId, idempotencyKey: req.idempotencyKey, partIndex: req.partIndex };

    if (a.unauthorized) return this.reject(base, 'unauthorized', 401, 'account_unauthorized', now, hangMs);

    const seen = a.deduplicates ? a.keys.get(req.idempotencyKey) : undefined;
    if (seen !== undefined) {
      this.duplicates.push({ at: now, account: a.account, chatId: c.chatId, idempotencyKey: req.idempotencyKey, messageId: seen });
      return { status: 200, body: { messageId: seen }, hangMs };
    }

    if (req.part.type === 'media') {
      const detail = this.media.problem(a.account, req.part.mediaRef, now);
      if (detail !== null) return this.reject(base, 'invalid', 400, 'media_ref_invalid', now, hangMs, { detail });
    }

    const blocked = this.floodWaitSeconds(a, now);
    if (blocked > 0) return this.reject(base, 'flood_wait', 429, 'flood_wait', now, hangMs, { retryAfterSeconds: blocked });

    const pace = checkPace(a.pace, now, a.maxPerMinute ?? this.limits.maxPerMinute, a.burst ?? this.limits.burst);
    if (!pace.ok) {
      const retryAfterSeconds = toRetryAfterSeconds(pace.waitMs);
      return this.reject(base, 'flood_wait', 429, 'flood_wait', now, hangMs, { retryAfterSeconds });
    }

    if (c.error !== null) return this.reject(base, 'chat_error', chatErrorStatus[c.error], c.error, now, hangMs);
    // a chat the account's directory lists with canSend false
    if (this.directories.forbids(a.account, c.chatId)) return this.reject(base, 'chat_error', 403, 'forbidden', now, hangMs);

    const slowWait = slowModeWaitMs(c.lastAcceptedAt, now, this.slowModeSeconds(a, c));
    if (slowWait > 0) {
      const retryAfterSeconds = toRetryAfterSeconds(slowWait);
      return this.reject(base, 'slow_mode', 429, 'slow_mode', now, hangMs, { retryAfterSeconds });
    }

    if (c.failNext > 0) {
      c.failNext--;
      return this.reject(base, 'fault', 500, 'internal_error', now, hangMs, { detail: 'failNext' });
    }
    // Drawn only when faults are on, so the sequence for a seed does not depend on fault-free traffic.
    if (this.limits.faultRate > 0 && this.random() < this.limits.faultRate) {
      return this.reject(base, 'fault', 500, 'internal_error', now, hangMs, { detail: 'random fault' });
    }

    // Judged last, on a send otherwise accepted: this send breaks the hidden limit, and the account is closed from it on.
    const breach = banBreach(a.sendTimes, now, this.banRules(a));
    if (breach !== null) {
      a.unauthorized = true;
      a.banned = { at: now, reason: breach };
      return this.reject(base, 'banned', 401, 'account_unauthorized', now, hangMs, { detail: `banned: ${breach}` });
    }

    const seq = this.received.length + 1;
    const message: ReceivedMessage = { ...req, account: a.account, seq, messageId: `msg-${seq}`, receivedAt: now, stampSlackMs, answeredAt: null };
    this.received.push(message);
    c.messages.push(message);
    c.lastAcceptedAt = now;
    a.pace = pace.next;
    a.sendTimes.push(now);
    a.keys.set(req.idempotencyKey, message.messageId);
    return { status: 200, body: { messageId: message.messageId }, hangMs, seq };
  }

  /** The answer to accepted message `seq` was written at `now` (after latency and any hang). */
  answered(seq: number, now: number): void {
    const message = this.received[seq - 1];
    if (message !== undefined && message.answeredAt === null) message.answeredAt = now;
  }

  messages(filter: { account?: string | undefined; chat?: string | undefined } = {}): ReceivedMessage[] {
    if (filter.account !== undefined && filter.chat !== undefined) {
      return [...(this.accounts.get(filter.account)?.chats.get(filter.chat)?.messages ?? [])];
    }
    return this.received.filter(
      (m) => (filter.account === undefined || m.account === filter.account) && (filter.chat === undefined || m.chatId === filter.chat),
    );
  }

  rejections(filter: { account?: string | undefined; chat?: string | undefined } = {}): Rejection[] {
    return this.rejected.filter(
      (r) => (filter.account === undefined || r.account === filter.account) && (filter.chat === undefined || r.chatId === filter.chat),
    );
  }

  duplicateKeys(): DuplicateKey[] {
    return [...this.duplicates];
  }

  sendTimes(account: string): number[] {
    return [...(this.accounts.get(account)?.sendTimes ?? [])];
  }

  mediaRecord(mediaRef: string): MediaRecord | undefined {
    return this.media.get(mediaRef);
  }

  /** Forgets every media ref, as a restarted platform would; what was received stays. */
  forgetMedia(): { forgotten: number } {
    return { forgotten: this.media.forget() };
  }

  stats() {
    const accounts = [...this.accounts.values()];
    return {
      accepted: this.received.length,
      rejected: { ...this.rejectedCounts },
      duplicateKeys: this.duplicates.length,
      uploads: accounts.flatMap((a) => [...a.uploads].map(([sha256, count]) => ({ account: a.account, sha256, count }))),
      accounts: accounts.map((a) => ({
        account: a.account,
        accepted: a.sendTimes.length,
        maxPerSecond: maxInWindow(a.sendTimes, 1000),
      })),
    };
  }

  accountViews() {
    return [...this.accounts.values()].map((a) => this.accountView(a));
  }

  chatViews(account: string) {
    return [...(this.accounts.get(account)?.chats.values() ?? [])].map((c) => this.chatView(c));
  }

  /** A chat's settings, or null when nothing has been sent to or configured for it. */
  chatSettings(account: string, chatId: string) {
    const c = this.accounts.get(account)?.chats.get(chatId);
    return c === undefined ? null : this.chatView(c);
  }

  private chatView(c: ChatState) {
    const a = this.account(c.account);
    return {
      account: c.account,
      chatId: c.chatId,
      error: c.error,
      slowModeSeconds: this.slowModeSeconds(a, c),
      failNext: c.failNext,
      hangNextMs: c.hangNextMs,
      received: c.messages.length,
    };
  }

  private accountView(a: AccountState) {
    return {
      account: a.account,
      unauthorized: a.unauthorized,
      ...this.banRules(a),
      banned: a.banned,
      maxPerMinute: a.maxPerMinute ?? this.limits.maxPerMinute,
      burst: a.burst ?? this.limits.burst,
      slowModeSeconds: a.slowModeSeconds ?? this.limits.slowModeSeconds,
      pendingFloodWaitSeconds: a.pendingFloodWaitSeconds,
      blockedUntil: a.blockedUntil > 0 ? a.blockedUntil : null,
      accepted: a.sendTimes.length,
      chats: a.chats.size,
      deduplicates: a.deduplicates,
    };
  }

  private banRules(a: AccountState): BanRules {
    return {
      banHourlyCap: a.ban.banHourlyCap ?? this.limits.banHourlyCap ?? 0,
      banDailyCap: a.ban.banDailyCap ?? this.limits.banDailyCap ?? 0,
      banMinGapMs: a.ban.banMinGapMs ?? this.limits.banMinGapMs ?? 0,
    };
  }

  private slowModeSeconds(a: AccountState, c: ChatState): number {
    return c.slowModeSeconds ?? a.slowModeSeconds ?? this.limits.slowModeSeconds;
  }

  /** A forced flood wait answers its full length once, then the remaining time until it ends. */
  private floodWaitSeconds(a: AccountState, now: number): number {
    if (a.pendingFloodWaitSeconds !== null) {
      const seconds = a.pendingFloodWaitSeconds;
      a.pendingFloodWaitSeconds = null;
      a.blockedUntil = now + seconds * 1000;
      return seconds;
    }
    return now < a.blockedUntil ? toRetryAfterSeconds(a.blockedUntil - now) : 0;
  }

  private reject(
    base: Pick<Rejection, 'account' | 'chatId' | 'idempotencyKey' | 'partIndex'>,
    reason: RejectReason,
    status: Answer['status'],
    error: PlatformErrorCode,
    now: number,
    hangMs: number,
    extra: { retryAfterSeconds?: number; detail?: string; message?: string } = {},
  ): Answer {
    this.rejected.push({
      ...base,
      at: now,
      reason,
      status,
      error,
      retryAfterSeconds: extra.retryAfterSeconds ?? null,
      detail: extra.detail ?? null,
    });
    this.rejectedCounts[reason]++;
    return { status, body: { error, ...extra }, hangMs };
  }

  private account(account: string): AccountState {
    let a = this.accounts.get(account);
    if (a === undefined) {
      a = newAccountState(account);
      this.accounts.set(account, a);
    }
    return a;
  }

  private chat(a: AccountState, chatId: string): ChatState {
    let c = a.chats.get(chatId);
    if (c === undefined) {
      c = newChatState(a.account, chatId);
      a.chats.set(chatId, c);
    }
    return c;
  }
}
