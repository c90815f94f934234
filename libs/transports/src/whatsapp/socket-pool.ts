import { isPaired, loadAuthState, storeLinkedSession, type AuthHandle } from './auth-state.js';
import type { LinkedSession } from './linked-session.js';
import { DEFAULT_OVERLIMIT_BACKOFF, failureOf, type WhatsAppFailure } from './classify.js';
import { CLOSED_BY_SERVER, Connection, type SocketRefusal } from './connection.js';
import { WhatsAppDirectory } from './directory-sync.js';
import { GroupMetadataCache } from './group-metadata-cache.js';
import { SentMessages } from './sent-messages.js';
import { UnsavedKeys } from './unsaved-keys.js';
import { describeRefusal, pairingEndCode, PairingError, takeLeaseForPairing, type PairingHooks, type PairingRequest, type PairingStart } from './pairing.js';
import { pairedEnd, pairingEnd, type PairingState } from './pairing-state.js';
import type { WhatsAppSocketPoolOptions } from './socket-pool-options.js';
import { followSocket } from './socket-events.js';
import type { WhatsAppSocket } from './socket.js';
import { deferred, delay, realTimers } from './timers.js';
import { WriteMarks } from './write-marks.js';
import { MessageStatuses } from './message-status.js';
import { releasingOnError, renewLeases } from './lease-renewal.js';
import { accountProxy, proxyChanged, throughProxy } from './proxy-socket.js';
import { socketConfig } from './socket-config.js';
import { groupMemberCount } from './message-receipts.js';
import { MemoryNewChatLimits, NewChats } from './new-chats.js';
import { HandedOn } from './handed-on.js';
import { ConnectTurns } from './connect-turns.js';

export type { WhatsAppSocketPoolOptions } from './socket-pool-options.js';

/**
 * One replica's WhatsApp sockets: at most one per account across the cluster (a Redis lease, renewed while open, handed over on
 * request), kept across jobs. The sender and the control API (pairing) share it.
 */
export class WhatsAppSocketPool {
  private readonly connections = new Map<string, Connection>();
  private readonly connecting = new Map<string, Promise<Connection | SocketRefusal>>();
  private readonly pairings = new Map<Connection, PairingState>();
  private readonly groups: GroupMetadataCache;
  readonly sent: SentMessages;
  private readonly unsaved: UnsavedKeys;
  /** when each send reaches the socket's write, and WhatsApp's answers after it */
  readonly writes = new WriteMarks();
  readonly statuses: MessageStatuses;
  readonly newChats: NewChats;
  readonly directory: WhatsAppDirectory;
  readonly handedOn: HandedOn;
  readonly turns: ConnectTurns | undefined;
  private readonly timer: NodeJS.Timeout;
  private renewing = false;
  private closed = false;
  private readonly leaseTtlMs: number;
  private readonly connectTimeoutMs: number;

  constructor(private readonly o: WhatsAppSocketPoolOptions) {
    this.leaseTtlMs = o.leaseTtlMs ?? 30_000;
    this.connectTimeoutMs = o.connectTimeoutMs ?? 20_000;
    this.groups = new GroupMetadataCache(o.clock, o.groupCacheTtlMs);
    this.handedOn = new HandedOn(o.clock, o.handoverPatienceMs ?? 10_000);
    this.turns = o.connectPace && new ConnectTurns({ ...o, pace: o.connectPace, timers: o.timers ?? realTimers, random: Math.random });
    this.unsaved = new UnsavedKeys({
      lease: o.lease,
      holderId: o.holderId,
      leaseTtlMs: this.leaseTtlMs,
      logger: o.logger,
      inUse: (a) => this.connections.has(a) || this.connecting.has(a),
    });
    this.sent = new SentMessages({ store: o.sentMessages, keepMs: o.resendKeepMs, clock: o.clock, logger: o.logger });
    this.newChats = new NewChats(o.newChats ?? new MemoryNewChatLimits(), o.clock, o.logger, (a) => this.connections.get(a), o.onNewChatsHeld);
    this.statuses = new MessageStatuses(o.clock, o.onMessageRefused, {
      ...(o.onReceipt && { onReceipt: o.onReceipt }),
      memberCount: (accountId, jid) => groupMemberCount(this.groups.peek(accountId, jid), this.connections.get(accountId)?.socket.user),
      onNewChatRefused: (accountId) => this.newChats.refused(accountId),
      onResendRefused: (r) => o.logger.warn({ ...r }, 'whatsapp refused a re-send of a message to one device; the message itself stands'),
    });
    this.directory = new WhatsAppDirectory({
      clock: o.clock,
      timers: o.timers ?? realTimers,
      logger: o.logger,
      sink: o.directory,
      backoff: o.directoryBackoff ?? DEFAULT_OVERLIMIT_BACKOFF,
      resyncMinMs: o.directoryResyncMinMs ?? 10 * 60_000,
      use: (accountId, work) => this.use(accountId, work),
      heldElsewhere: (accountId) => this.heldElsewhere(accountId),
      lookup: (accountId, jid) => {
        const c = this.connections.get(accountId);
        return c && !c.disposed ? this.groups.get(accountId, jid, (j) => c.socket.groupMetadata(j)) : Promise.reject(new Error('no socket open'));
      },
      prime: (accountId, groups) => this.groups.prime(accountId, groups),
    });
    (this.timer = setInterval(() => void this.renewAll(), o.renewEveryMs ?? 2_000)).unref();
  }

  /** Runs `work` on the account's open socket, connecting it when the lease is free; refused when held elsewhere, unpaired or shut. */
  async use<T>(
    accountId: string,
    work: (socket: WhatsAppSocket, whenClosedHere?: Connection['whenClosedHere']) => Promise<T>,
    proxy?: string | null,
    askHandover = true,
  ): Promise<{ ok: true; value: T } | ({ ok: false } & SocketRefusal)> {
    // a send names the account's proxy as it is now: a socket through another one is replaced
    if (proxyChanged(this.connections.get(accountId), proxy)) await this.dispose(this.connections.get(accountId)!, 'proxy changed');
    const got = await this.acquire(accountId, askHandover, proxy);
    if (!(got instanceof Connection)) return { ok: false, ...got };
    got.inFlight++;
    try {
      return { ok: true, value: await work(got.socket, (listener) => got.whenClosedHere(listener)) };
    } finally {
      got.inFlight--;
      if (got.draining && got.inFlight === 0) void this.dispose(got, 'handed over');
    }
  }

  /** Whether another replica holds the account's socket now (asked without requesting a hand-over). */
  async heldElsewhere(accountId: string): Promise<boolean> {
    return !this.isOpen(accountId) && (await this.o.lease.peek(accountId, this.o.holderId)) === 'other';
  }

  warmChat(accountId: string, jid: string): Promise<void> {
    return this.connections.get(accountId)?.auth.warmChat(jid) ?? Promise.resolve();
  }

  isOpen(accountId: string): boolean {
    const c = this.connections.get(accountId);
    return c?.isSettled === true && !c.disposed && !c.keysRefused;
  }

  /** The accounts whose socket this replica has open or opening (not those still waiting for a connect turn), and whether a send or a pairing uses each now. */
  heldAccounts(): { accountId: string; busy: boolean }[] {
    const waiting = this.turns?.waiting();
    const ids = new Set([...this.connections.keys(), ...[...this.connecting.keys()].filter((id) => !waiting?.has(id))]);
    return [...ids].map((accountId) => {
      const c = this.connections.get(accountId);
      return { accountId, busy: !c || c.inFlight > 0 || this.pairings.has(c) };
    });
  }

  /** Closes an account's idle socket and lets its lease go (`handOver`: for another replica, not reopened here within patience); false when in use. */
  async letGo(accountId: string, handOver = true): Promise<boolean> {
    const c = this.connections.get(accountId);
    if (!c || c.inFlight > 0 || this.pairings.has(c)) return false;
    return this.dispose(c, handOver ? 'handed over' : 'idle').then(() => true);
  }

  /** A new linked device from fresh credentials: resolves with the first QR (or a pairing code); `hooks` tell how it ended. */
  async pair(accountId: string, request: PairingRequest, hooks: PairingHooks): Promise<PairingStart> {
    if (this.closed) throw new PairingError('closed', 'shutting down');
    const current = this.connections.get(accountId) ?? (await this.connecting.get(accountId));
    if (current instanceof Connection) await this.dispose(current, 'superseded by a new pairing');
    await takeLeaseForPairing(this.o.lease, accountId, this.o.holderId, this.leaseTtlMs, request.handoverWaitMs ?? 15_000, this.o.renewEveryMs ?? 2_000);
    const auth = await releasingOnError(this.o, accountId, () => loadAuthState(this.o.auth, accountId, this.o.secretsKeys, this.o.clock, { fresh: true }));
    const firstQr = deferred<string>();
    const conn = this.open(accountId, 'pair', auth, firstQr.resolve, await accountProxy(this.o, accountId));
    const state: PairingState = { hooks, timer: null, ended: false, started: false };
    this.pairings.set(conn, state);
    const timer = delay(this.connectTimeoutMs);
    const first = await Promise.race([firstQr.promise.then((qr) => ({ qr })), conn.ready, timer.promise.then(() => 'timeout' as const)]);
    timer.cancel();
    if (first === 'timeout' || first === null || !('qr' in first)) {
      const why =
        first === 'timeout'
          ? `no answer from WhatsApp within ${this.connectTimeoutMs} ms`
          : first === null
            ? 'opened without pairing'
            : describeRefusal(conn.proxy ? ((await throughProxy(accountId, conn.proxy, first, this.o.reportProxy)) ?? first) : first);
      state.ended = true;
      await this.dispose(conn, 'pairing could not start');
      throw new PairingError('unreachable', `could not start pairing: ${why}`);
    }
    let pairingCode: string | undefined;
    if (request.phoneNumber) {
      try {
        pairingCode = await conn.socket.requestPairingCode(request.phoneNumber);
      } catch (error) {
        state.ended = true;
        await this.dispose(conn, 'pairing code refused');
        throw new PairingError('unreachable', `could not get a pairing code: ${failureOf(error).message}`);
      }
    }
    const ttlMs = request.ttlMs ?? (pairingCode ? (this.o.pairingCodeTtlMs ?? 180_000) : (this.o.qrTtlMs ?? 60_000));
    state.timer = setTimeout(() => {
      if (!isPaired(conn.auth.state.creds)) void this.endPairing(conn, { code: 'pairing_expired', message: 'the QR or pairing code was not used in time' });
    }, ttlMs);
    state.timer.unref();
    state.started = true;
    return { ...(pairingCode ? { pairingCode } : { qr: first.qr }), expiresAt: new Date(this.o.clock.now() + ttlMs) };
  }

  /** An imported linked device replaces the account's auth state and connects once: null when it opened, else why not. */
  async importSession(accountId: string, session: LinkedSession, handoverWaitMs = 15_000): Promise<SocketRefusal | null> {
    const current = this.connections.get(accountId) ?? (await this.connecting.get(accountId));
    if (current instanceof Connection) await this.dispose(current, 'session replaced');
    await takeLeaseForPairing(this.o.lease, accountId, this.o.holderId, this.leaseTtlMs, handoverWaitMs, this.o.renewEveryMs ?? 2_000);
    await releasingOnError(this.o, accountId, () => storeLinkedSession(this.o.auth, accountId, session, this.o.secretsKeys[0]!, new Date(this.o.clock.now())));
    const opened = await this.use(accountId, async () => undefined);
    const conn = this.connections.get(accountId);
    if (conn) await this.dispose(conn, 'session checked');
    return opened.ok ? null : opened;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.turns?.close();
    clearInterval(this.timer);
    this.directory.close();
    await Promise.allSettled([...this.connecting.values()]);
    await Promise.allSettled(
      [...this.connections.values()].map((c) =>
        this.pairings.has(c) ? this.endPairing(c, { code: 'shutdown', message: 'the service stopped during pairing' }) : this.dispose(c, 'shutdown'),
      ),
    );
    await this.unsaved.close();
    await this.sent.flush();
  }

  private acquire(accountId: string, askHandover: boolean, proxy?: string | null): Promise<Connection | SocketRefusal> {
    if (this.closed) return Promise.resolve({ reason: 'closed-here' });
    const existing = this.connections.get(accountId);
    if (!existing && askHandover && this.handedOn.recent(accountId)) return Promise.resolve({ reason: 'busy' });
    if (existing) {
      if (existing.keysRefused) return Promise.resolve({ reason: 'keys-unsaved' });
      if (existing.draining || existing.kind === 'pair') return Promise.resolve({ reason: 'busy' });
      return existing.ready.then((r) => r ?? existing);
    }
    let pending = this.connecting.get(accountId);
    if (pending && !askHandover) this.turns?.grant(accountId);
    if (!pending) {
      pending = this.connect(accountId, askHandover, proxy).finally(() => this.connecting.delete(accountId));
      this.connecting.set(accountId, pending);
    }
    return pending;
  }

  private async connect(accountId: string, askHandover: boolean, proxyUrl?: string | null): Promise<Connection | SocketRefusal> {
    const replaced = this.statuses.replacedHold(accountId);
    if (replaced) return { reason: 'connect-failed', failure: replaced };
    // Keys this replica used but could not store go first: without them, no socket (the lease is still ours).
    if (!(await this.unsaved.settle(accountId))) return { reason: 'keys-unsaved' };
    if (askHandover && this.turns && !(await this.turns.before(accountId))) return { reason: 'closed-here' };
    const lease = await this.o.lease.acquire(accountId, this.o.holderId, this.leaseTtlMs, askHandover);
    if (lease === 'busy') return { reason: 'busy' };
    if (lease === 'taken') {
      const settle = delay(this.o.freshLeaseWaitMs ?? Math.round((this.o.renewEveryMs ?? 2_000) * 1.25));
      await settle.promise;
      // Between taking and connecting, the lease must not have gone elsewhere.
      if ((await this.o.lease.peek(accountId, this.o.holderId)) !== 'mine') return { reason: 'busy' };
    }
    const auth: AuthHandle = await releasingOnError(this.o, accountId, () =>
      loadAuthState(this.o.auth, accountId, this.o.secretsKeys, this.o.clock, {
        onWriteFailed: (error, kept) => this.keysUnsaved(accountId, auth, error, kept),
      }),
    );
    if (!isPaired(auth.state.creds)) {
      await this.o.lease.release(accountId, this.o.holderId).catch(() => undefined);
      return { reason: 'not-paired' };
    }
    const proxy = await accountProxy(this.o, accountId, proxyUrl);
    const conn = this.open(accountId, 'send', auth, () => conn.resolveReady({ reason: 'not-paired' }), proxy);
    const timeout = delay(this.connectTimeoutMs);
    void timeout.promise.then(() =>
      conn.resolveReady({
        reason: 'connect-failed',
        failure: { source: 'connection', statusCode: 408, message: `not connected within ${this.connectTimeoutMs} ms` },
      }),
    );
    const ready = await conn.ready;
    timeout.cancel();
    const refusal = proxy ? await throughProxy(accountId, proxy, ready, this.o.reportProxy) : ready;
    if (refusal) {
      await this.dispose(conn, 'did not open');
      return refusal;
    }
    return conn;
  }

  private open(accountId: string, kind: 'send' | 'pair', auth: AuthHandle, onQr: (qr: string) => void, proxy: Connection['proxy']): Connection {
    const socket = this.makeSocket(accountId, auth, proxy);
    const conn = new Connection(accountId, kind, socket, auth);
    conn.proxy = proxy;
    this.connections.set(accountId, conn);
    this.follow(conn, socket, onQr);
    return conn;
  }

  private makeSocket(accountId: string, auth: AuthHandle, proxy: Connection['proxy']): WhatsAppSocket {
    const caches = { groups: this.groups, sent: this.sent, writes: this.writes, connectTimeoutMs: this.connectTimeoutMs };
    const socket: WhatsAppSocket = this.o.makeSocket(
      accountId,
      socketConfig(this.o, caches, accountId, auth, proxy, () => socket),
    );
    return socket;
  }

  private follow(conn: Connection, socket: WhatsAppSocket, onQr: (qr: string) => void): void {
    followSocket(conn, socket, onQr, {
      options: this.o,
      groups: this.groups,
      statuses: this.statuses,
      newChats: this.newChats,
      directory: this.directory,
      opened: (c) => this.opened(c),
      closed: (c, error) => this.closedByServer(c, error),
    });
  }

  private opened(conn: Connection): void {
    if (!conn.wasOpen) {
      conn.wasOpen = true;
      this.o.onSocket?.({ kind: 'opened' });
      if (conn.kind === 'send') this.directory.opened(conn.accountId, conn.socket);
    }
    conn.resolveReady(null);
    if (this.pairings.has(conn)) void pairedEnd(this.pairings.get(conn), conn, this.o.logger, (why) => this.dispose(conn, why));
  }

  private closedByServer(conn: Connection, error: Error | undefined): void {
    if (conn.disposed) return;
    const failure: WhatsAppFailure = error ? failureOf(error) : { source: 'connection', statusCode: 428, message: 'connection closed' };
    const pairing = this.pairings.get(conn);
    // After the phone accepts, WhatsApp closes the first connection (restart required) and the device reconnects.
    if (pairing && !pairing.ended && isPaired(conn.auth.state.creds) && failure.source === 'connection' && failure.statusCode === 515) {
      conn.socket = this.makeSocket(conn.accountId, conn.auth, conn.proxy);
      this.follow(conn, conn.socket, () => undefined);
      const reconnect = setTimeout(() => {
        if (!conn.isSettled) void this.endPairing(conn, { code: 'connection_closed', message: 'paired, but the connection did not open again' });
      }, this.connectTimeoutMs);
      reconnect.unref();
      return;
    }
    if (pairing) {
      if (!pairing.started) conn.resolveReady({ reason: 'connect-failed', failure });
      else void this.endPairing(conn, { code: pairingEndCode(failure), message: failure.message });
      return;
    }
    if (!conn.isSettled) {
      conn.resolveReady({ reason: 'connect-failed', failure });
      return;
    }
    if (failure.source === 'connection' && failure.statusCode === 440) this.statuses.replaced(conn.accountId);
    this.o.logger.warn({ accountId: conn.accountId, failure }, 'whatsapp connection closed');
    void this.dispose(conn, CLOSED_BY_SERVER);
  }

  /** The store refused the keys: no new use; the socket closes a moment later, so what it wrote last arrives whole. */
  private keysUnsaved(accountId: string, auth: AuthHandle, error: unknown, kept: boolean): void {
    this.unsaved.failed(accountId, auth, error, kept);
    const conn = this.connections.get(accountId);
    if (!conn || conn.auth !== auth || conn.disposed || conn.keysRefused) return;
    conn.keysRefused = true;
    setTimeout(() => void this.dispose(conn, 'keys_unsaved'), this.o.keysRefusedCloseMs ?? 2_000).unref();
  }

  private endPairing(conn: Connection, reason: { code: string; message: string }): Promise<void> {
    return pairingEnd(this.pairings.get(conn), conn, reason, this.o.logger, (why) => this.dispose(conn, why));
  }

  /** Closes a socket, waits for its writes, then lets the lease go: the next holder never overlaps it. */
  private async dispose(conn: Connection, why: string): Promise<void> {
    if (conn.disposed) return;
    conn.resolveReady(conn.dispose(why));
    this.o.onSocket?.({ kind: 'closed', wasOpen: conn.wasOpen, why });
    const state = this.pairings.get(conn);
    if (state) {
      state.ended = true;
      if (state.timer) clearTimeout(state.timer);
      this.pairings.delete(conn);
    }
    if (this.connections.get(conn.accountId) === conn) this.connections.delete(conn.accountId);
    if (why === 'handed over') this.handedOn.mark(conn.accountId);
    this.groups.forgetAccount(conn.accountId);
    this.directory.forgetGroups(conn.accountId);
    try {
      await conn.socket.end(undefined);
    } catch (err) {
      this.o.logger.warn({ err, accountId: conn.accountId }, 'whatsapp socket did not end cleanly');
    }
    await conn.auth.flush().catch(() => undefined);
    // Keys behind the store: the lease stays, so no replica connects before they are written.
    if (!this.unsaved.has(conn.accountId)) await this.o.lease.release(conn.accountId, this.o.holderId).catch(() => undefined);
    this.o.logger.debug({ accountId: conn.accountId, why }, 'whatsapp socket closed');
  }

  private async renewAll(): Promise<void> {
    if (this.renewing || this.closed) return;
    void this.unsaved.renewAll();
    this.renewing = true;
    try {
      await renewLeases({
        connections: this.connections.values(),
        lease: this.o.lease,
        holderId: this.o.holderId,
        leaseTtlMs: this.leaseTtlMs,
        drainMaxMs: this.o.drainMaxMs ?? 30_000,
        logger: this.o.logger,
        isPairing: (c) => this.pairings.has(c),
        supersedePairing: (c) => (this.pairings.get(c)!.ended = true),
        endPairing: (c, reason) => this.endPairing(c, reason),
        dispose: (c, why) => this.dispose(c, why),
      });
    } finally {
      this.renewing = false;
    }
  }
}
