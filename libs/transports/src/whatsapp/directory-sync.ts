import type { ChatDirectorySink, Clock, DirectoryChat, DirectorySyncState } from '@metronome/core';
import type { GroupMetadata } from '@whiskeysockets/baileys';
import { failureOf, isOverlimit, overlimitWaitMs, type OverlimitBackoff, type WhatsAppFailure } from './classify.js';
import type { SocketRefusal } from './connection.js';
import { groupEntry, ownIds, type GroupStanding } from './directory-entries.js';
import type { WhatsAppLogger, WhatsAppSocket } from './socket.js';
import type { Timers } from './timers.js';

export interface WhatsAppDirectoryOptions {
  clock: Clock;
  timers: Timers;
  logger: WhatsAppLogger;
  sink: ChatDirectorySink | undefined;
  backoff: OverlimitBackoff;
  resyncMinMs: number;
  use<T>(accountId: string, work: (socket: WhatsAppSocket) => Promise<T>): Promise<{ ok: true; value: T } | ({ ok: false } & SocketRefusal)>;
  heldElsewhere(accountId: string): Promise<boolean>;
  lookup(accountId: string, jid: string): Promise<GroupMetadata>;
  /** hands a listing's metadata to the group cache, so sends to those groups need no lookup */
  prime(accountId: string, groups: GroupMetadata[]): void;
}

interface AccountState {
  groups: Map<string, GroupStanding>;
  listing: Promise<void> | null;
  streak: number;
  backoff: { until: number; reason: string; timer: { cancel(): void } } | null;
  lastListedAt: number | null;
  directs: Map<string, string | null>;
  /** in order: an event's patch never lands before the listing it follows */
  writes: Promise<unknown>;
}

const MAX_DIRECTS = 50_000;

/**
 * Lists an account's groups with ONE `groupFetchAllParticipating` (on request, and when a socket first opens), backs off on
 * `rate-overlimit` without touching sends, and writes what socket events and sends tell.
 */
export class WhatsAppDirectory {
  private readonly accounts = new Map<string, AccountState>();
  private closed = false;

  constructor(private readonly o: WhatsAppDirectoryOptions) {}

  get sink(): ChatDirectorySink | undefined {
    return this.o.sink;
  }

  sync(accountId: string, sink: ChatDirectorySink, signal?: AbortSignal): Promise<void> {
    const st = this.state(accountId);
    if (st.listing) return st.listing;
    if (st.backoff) return this.report(accountId, sink, { status: 'backing_off', until: new Date(st.backoff.until), reason: st.backoff.reason });
    if (signal?.aborted) return Promise.resolve();
    return this.track(st, async () => {
      const used = await this.o.use(accountId, (socket) => this.list(accountId, socket, sink));
      if (!used.ok) await this.refused(accountId, sink, used);
    });
  }

  opened(accountId: string, socket: WhatsAppSocket): void {
    const sink = this.o.sink;
    const st = this.state(accountId);
    if (!sink || this.closed || st.listing || st.backoff) return;
    if (st.lastListedAt !== null && this.o.clock.now() - st.lastListedAt < this.o.resyncMinMs) return;
    void this.track(st, () => this.list(accountId, socket, sink)).catch((err: unknown) =>
      this.o.logger.warn({ err, accountId }, 'whatsapp chat directory: listing on connect not written'),
    );
  }

  /** The socket here closed: its events are no longer followed, so its standings may go stale. */
  forgetGroups(accountId: string): void {
    this.accounts.get(accountId)?.groups.clear();
  }

  isListing(accountId: string): boolean {
    return Boolean(this.accounts.get(accountId)?.listing);
  }

  standing(accountId: string, jid: string): GroupStanding | undefined {
    return this.accounts.get(accountId)?.groups.get(jid);
  }

  setStanding(accountId: string, jid: string, standing: GroupStanding): void {
    this.state(accountId).groups.set(jid, standing);
  }

  lookup(accountId: string, jid: string): Promise<GroupMetadata> {
    return this.o.lookup(accountId, jid);
  }

  upsert(accountId: string, chats: DirectoryChat[]): void {
    const sink = this.o.sink;
    if (sink && chats.length > 0) this.background(accountId, (at) => sink.upsert(accountId, chats, at));
  }

  patch(accountId: string, chatId: string, change: Partial<Omit<DirectoryChat, 'chatId'>>): void {
    const sink = this.o.sink;
    if (sink) this.background(accountId, (at) => sink.patch(accountId, chatId, change, at));
  }

  direct(accountId: string, chatId: string, title: string | null): void {
    if (!this.o.sink) return;
    const directs = this.state(accountId).directs;
    const known = directs.get(chatId);
    if (known !== undefined && (title === null || title === known)) return;
    if (directs.size >= MAX_DIRECTS) directs.clear();
    const kept = title ?? known ?? null;
    directs.set(chatId, kept);
    this.upsert(accountId, [{ chatId, title: kept, kind: 'direct', memberCount: null, canSend: true, cannotSendReason: null }]);
  }

  close(): void {
    this.closed = true;
    for (const st of this.accounts.values()) st.backoff?.timer.cancel();
  }

  private async list(accountId: string, socket: WhatsAppSocket, sink: ChatDirectorySink): Promise<void> {
    const st = this.state(accountId);
    await this.report(accountId, sink, { status: 'syncing', synced: 0 });
    let groups: Record<string, GroupMetadata>;
    try {
      groups = await socket.groupFetchAllParticipating();
    } catch (error) {
      await this.failed(accountId, sink, failureOf(error));
      return;
    }
    this.o.prime(accountId, Object.values(groups));
    const own = ownIds(socket.user);
    const chats: DirectoryChat[] = [];
    st.groups.clear();
    for (const meta of Object.values(groups)) {
      const { chat, standing } = groupEntry(meta, own);
      chats.push(chat);
      st.groups.set(chat.chatId, standing);
    }
    st.streak = 0;
    st.lastListedAt = this.o.clock.now();
    await this.write(accountId, (at) => sink.replaceAll(accountId, chats, at, { kinds: ['group'] }));
    await this.report(accountId, sink, { status: 'ok', size: chats.length });
  }

  private async failed(accountId: string, sink: ChatDirectorySink, failure: WhatsAppFailure): Promise<void> {
    if (!isOverlimit(failure)) {
      await this.report(accountId, sink, { status: 'failed', reason: `the group listing failed: ${failure.message}` });
      return;
    }
    const st = this.state(accountId);
    const waitMs = overlimitWaitMs(++st.streak, this.o.backoff);
    const until = this.o.clock.now() + waitMs;
    const reason = 'WhatsApp answered rate-overlimit to the group listing: retried at the end of the wait; sends go on';
    st.backoff?.timer.cancel();
    st.backoff = { until, reason, timer: this.o.timers.setTimeout(() => void this.retry(accountId, sink), waitMs) };
    await this.report(accountId, sink, { status: 'backing_off', until: new Date(until), reason });
  }

  private async retry(accountId: string, sink: ChatDirectorySink): Promise<void> {
    const st = this.state(accountId);
    st.backoff = null;
    if (this.closed) return;
    try {
      if (await this.o.heldElsewhere(accountId)) {
        await this.report(accountId, sink, { status: 'failed', reason: 'the account moved to another replica before the listing was retried: sync again' });
        return;
      }
      await this.sync(accountId, sink);
    } catch (err) {
      this.o.logger.warn({ err, accountId }, 'whatsapp chat directory: retry not written');
    }
  }

  private async refused(accountId: string, sink: ChatDirectorySink, refusal: SocketRefusal): Promise<void> {
    switch (refusal.reason) {
      case 'busy':
      case 'closed-here':
        return this.report(accountId, sink, {
          status: 'failed',
          reason: "the account's connection is on another replica, asked to hand it over: sync again in a few seconds",
        });
      case 'not-paired':
        return this.report(accountId, sink, { status: 'failed', reason: 'the account has no paired WhatsApp device' });
      case 'keys-unsaved':
        return this.report(accountId, sink, {
          status: 'failed',
          reason: "the account's keys are not saved yet (PostgreSQL refused them): sync again once it answers",
        });
      case 'connect-failed':
        return this.failed(accountId, sink, refusal.failure);
    }
  }

  private report(accountId: string, sink: ChatDirectorySink, state: DirectorySyncState): Promise<void> {
    return this.write(accountId, (at) => sink.syncState(accountId, state, at));
  }

  private write(accountId: string, fn: (at: Date) => Promise<void>): Promise<void> {
    const st = this.state(accountId);
    const done = st.writes.then(() => fn(new Date(this.o.clock.now())));
    st.writes = done.catch(() => undefined);
    return done;
  }

  private background(accountId: string, fn: (at: Date) => Promise<void>): void {
    this.write(accountId, fn).catch((err: unknown) => this.o.logger.warn({ err, accountId }, 'whatsapp chat directory: event not written'));
  }

  private track(st: AccountState, work: () => Promise<void>): Promise<void> {
    const listing = work().finally(() => {
      if (st.listing === listing) st.listing = null;
    });
    st.listing = listing;
    return listing;
  }

  private state(accountId: string): AccountState {
    let st = this.accounts.get(accountId);
    if (!st) {
      st = { groups: new Map(), listing: null, streak: 0, backoff: null, lastListedAt: null, directs: new Map(), writes: Promise.resolve() };
      this.accounts.set(accountId, st);
    }
    return st;
  }
}
