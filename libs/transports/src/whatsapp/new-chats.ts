import {
  capHolds,
  NEW_CHAT_CAP,
  NEW_CHATS_REFUSED,
  newChatHold,
  REACHOUT_TIME_LOCK,
  type Clock,
  type NewChatCap,
  type NewChatHold,
  type NewChatLimits,
} from '@metronome/core';
import { isLidUser, jidNormalizedUser, type SignalKeyStore } from '@whiskeysockets/baileys';
import type { LidMapping } from './lid-identity.js';
import type { WhatsAppLogger, WhatsAppSocket, WhatsAppSocketEvents } from './socket.js';

// What WhatsApp lets an account do with new chats (reach-out time lock, new-chat cap, a 463), kept in PostgreSQL for every
// replica. Baileys rc14 cannot fetch the lock after a 463 (handleBadAck tests '463' in both branches), so it is fetched here.

export interface NewChatLimitStore {
  read(accountId: string): Promise<NewChatLimits | null>;
  refused(accountId: string, at: Date): Promise<void>;
  reachoutLock(accountId: string, lock: { until: Date; type: string } | null, now: Date): Promise<void>;
  cap(accountId: string, cap: NewChatCap): Promise<void>;
  /** a store that keeps what it read: the account's next read is fresh */
  forget?(accountId: string): void;
}

export class MemoryNewChatLimits implements NewChatLimitStore {
  private readonly limits = new Map<string, NewChatLimits>();
  private of(accountId: string): NewChatLimits {
    let l = this.limits.get(accountId);
    if (!l) this.limits.set(accountId, (l = { refusedAt: null, reachoutLock: null, cap: null }));
    return l;
  }
  async read(accountId: string) {
    return this.limits.get(accountId) ?? null;
  }
  async refused(accountId: string, at: Date) {
    this.of(accountId).refusedAt ??= at;
  }
  async reachoutLock(accountId: string, lock: { until: Date; type: string } | null) {
    this.of(accountId).reachoutLock = lock;
  }
  async cap(accountId: string, cap: NewChatCap) {
    this.of(accountId).cap = cap;
  }
}

type Live = (accountId: string) => { socket: WhatsAppSocket; auth: { state: { keys: SignalKeyStore } } } | undefined;

type On = <E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void) => void;
type CapInfo = WhatsAppSocketEvents['message-capping.update'];

/** A Baileys NewChatMessageCapInfo as the limits keep it (its timestamps are Unix seconds as text). */
export function capOf(info: CapInfo, now: Date): NewChatCap {
  const seconds = (s: string | undefined) => (s && Number(s) > 0 ? new Date(Number(s) * 1000) : null);
  return {
    status: info.capping_status ?? 'NONE',
    total: typeof info.total_quota === 'number' ? info.total_quota : null,
    used: typeof info.used_quota === 'number' ? info.used_quota : null,
    cycleEndsAt: seconds(info.cycle_end_timestamp),
    toldAt: now,
  };
}

// Baileys' tctoken window (Utils/tc-token-utils.js isTcTokenExpired, not exported): 4 buckets of 7 days.
const TOKEN_BUCKET_S = 604_800;
const TOKEN_BUCKETS = 4;
function tokenExpired(timestamp: string | number | undefined, nowMs: number): boolean {
  const ts = Number(timestamp);
  if (!timestamp || Number.isNaN(ts)) return true;
  const cutoff = (Math.floor(nowMs / 1000 / TOKEN_BUCKET_S) - (TOKEN_BUCKETS - 1)) * TOKEN_BUCKET_S;
  return ts < cutoff;
}

const OPEN_FETCH_WAIT_MS = 3_000;

export class NewChats {
  private readonly fetching = new Map<string, Promise<unknown>>();
  private readonly writing = new Map<string, Promise<unknown>>();
  private readonly readUnder = new WeakSet<WhatsAppSocket>();

  constructor(
    private readonly store: NewChatLimitStore,
    private readonly clock: Clock,
    private readonly logger: WhatsAppLogger,
    private readonly live: Live,
    private readonly onHeld: (accountId: string, code: string) => void = () => undefined,
  ) {}

  /** What holds the account's new chats now, from the store; right after its socket opened, once the lock and cap are in. */
  async hold(accountId: string): Promise<NewChatHold | null> {
    const fetching = this.fetching.get(accountId);
    if (fetching) await Promise.race([fetching, new Promise((r) => setTimeout(r, OPEN_FETCH_WAIT_MS).unref())]);
    await this.writing.get(accountId);
    // what another replica wrote while it held the account is read afresh under a socket new here
    const socket = this.live(accountId)?.socket;
    if (socket && !this.readUnder.has(socket)) {
      this.readUnder.add(socket);
      this.store.forget?.(accountId);
    }
    return newChatHold(await this.store.read(accountId), new Date(this.clock.now()));
  }

  /** A one-to-one chat without a valid privacy token (stored under the person's LID, as WhatsApp Web does); with no socket, all. */
  async isNew(accountId: string, jid: string): Promise<boolean> {
    if (jid.endsWith('@g.us')) return false;
    const conn = this.live(accountId);
    if (!conn) return true;
    const keys = conn.auth.state.keys;
    const mapping: LidMapping = conn.socket.signalRepository.lidMapping;
    const user = jidNormalizedUser(jid);
    const lid = isLidUser(user) ? user : jidNormalizedUser((await mapping.getLIDForPN(user).catch(() => null)) ?? user);
    const found = await keys.get('tctoken', [...new Set([lid, user])]);
    return !Object.values(found).some((t) => t?.token?.length && !tokenExpired(t.timestamp, this.clock.now()));
  }

  follow(on: On, accountId: string, socket: WhatsAppSocket): void {
    on('connection.update', (u) => {
      if (u.connection === 'open') this.opened(accountId, socket);
      const lock = u.reachoutTimeLock;
      if (!lock) return;
      const now = new Date(this.clock.now());
      // WhatsApp Web takes a minute when an active lock names no end (Baileys does the same)
      const until = lock.isActive ? (lock.timeEnforcementEnds ?? new Date(now.getTime() + 60_000)) : null;
      if (until && until.getTime() > now.getTime()) this.onHeld(accountId, REACHOUT_TIME_LOCK);
      this.write(accountId, 'reach-out time lock', this.store.reachoutLock(accountId, until && { until, type: lock.enforcementType ?? 'DEFAULT' }, now));
    });
    on('message-capping.update', (info) => this.capped(accountId, capOf(info, new Date(this.clock.now()))));
  }

  private opened(accountId: string, socket: WhatsAppSocket): void {
    const now = () => new Date(this.clock.now());
    const lock = socket
      .fetchAccountReachoutTimelock()
      .then((l) =>
        this.store.reachoutLock(
          accountId,
          l.isActive ? { until: l.timeEnforcementEnds ?? new Date(now().getTime() + 60_000), type: l.enforcementType ?? 'DEFAULT' } : null,
          now(),
        ),
      )
      .catch((err: unknown) => this.logger.debug({ err, accountId }, 'whatsapp reach-out time lock not fetched'));
    const cap = socket
      .fetchNewChatMessageCap()
      .then((info) => info && this.capped(accountId, capOf(info as CapInfo, now())))
      .catch((err: unknown) => this.logger.debug({ err, accountId }, 'whatsapp new-chat cap not fetched'));
    const both = Promise.all([lock, cap]).finally(() => this.fetching.get(accountId) === both && this.fetching.delete(accountId));
    this.fetching.set(accountId, both);
  }

  /** A 463: new chats wait (every replica), and the lock is fetched. */
  refused(accountId: string): void {
    this.onHeld(accountId, NEW_CHATS_REFUSED);
    this.write(accountId, '463', this.store.refused(accountId, new Date(this.clock.now())));
    void this.live(accountId)
      ?.socket.fetchAccountReachoutTimelock()
      .catch((err: unknown) => this.logger.debug({ err, accountId }, 'whatsapp reach-out time lock not fetched'));
  }

  private capped(accountId: string, cap: NewChatCap): Promise<void> {
    if (capHolds(cap, cap.toldAt)) this.onHeld(accountId, NEW_CHAT_CAP);
    const written = this.store.cap(accountId, cap);
    this.write(accountId, 'new-chat cap', written);
    return written.catch(() => undefined);
  }

  private write(accountId: string, what: string, written: Promise<void>): void {
    const settled = Promise.all([
      this.writing.get(accountId),
      written.catch((err: unknown) => this.logger.error({ err, accountId }, `whatsapp ${what} not recorded`)),
    ]);
    this.writing.set(accountId, settled);
    void settled.then(() => this.writing.get(accountId) === settled && this.writing.delete(accountId));
  }
}
