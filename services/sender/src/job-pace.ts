import {
  afterWrite,
  chatWindows,
  DAY_MS,
  drawSendDelayMs,
  gateLimit,
  gateLimits,
  GroupCommit,
  holdCode,
  pacedPerMinute,
  SEND_GAP_MARGIN_MS,
  writeWaitMs,
  type SendLimits,
  type WrittenPace,
} from '@metronome/core';
import { isTransientDbError, type RunForSend } from '@metronome/db';
import type { ChatPace, PaceFloors, PaceReservation, SafeReservation } from '@metronome/redis';
import type { Transport } from '@metronome/transports';
import type { JobDeps } from './deps.js';

// The pace of one job, with one owner: the limits reserved in Redis (libs/core limits.ts), its writes' spacing, the next job's floors.

export type StopReason = 'window' | 'pace' | 'account-wait' | 'account-unavailable' | 'lock-lost' | 'error' | 'storage' | 'drain';

// Hard stops end a chat mid-way (its later parts wait); soft stops let a started chat finish.
const HARD_STOPS: ReadonlySet<StopReason> = new Set(['window', 'account-wait', 'account-unavailable', 'lock-lost', 'error', 'storage', 'drain']);

/** Why the job stopped (the first hard stop wins over soft ones; the account lock's lease run out is one), and its sleeps, woken at once by a drain. */
export class JobStop {
  private why: StopReason | null = null;
  private readonly sleepers = new Set<() => void>();

  constructor(
    private readonly deps: JobDeps,
    private readonly lease: { heldAt(now: number): boolean },
  ) {}

  get reason(): StopReason | null {
    return this.why;
  }

  get hard(): boolean {
    return this.why !== null && HARD_STOPS.has(this.why);
  }

  with(reason: StopReason): void {
    if (this.why === null || (!HARD_STOPS.has(this.why) && HARD_STOPS.has(reason))) this.why = reason;
  }

  halted(): boolean {
    return this.hard || this.deps.draining.aborted || !this.leaseHeld();
  }

  leaseHeld(): boolean {
    if (this.lease.heldAt(this.deps.clock.now())) return true;
    this.with('lock-lost');
    return false;
  }

  /** Sleeps `ms`, or less when the sender starts draining (the caller checks). */
  async pause(ms: number): Promise<void> {
    if (ms <= 0 || this.deps.draining.aborted) return;
    await new Promise<void>((resolve) => {
      this.sleepers.add(resolve);
      void this.deps.sleep(Math.ceil(ms)).then(() => {
        this.sleepers.delete(resolve);
        resolve();
      });
    });
  }

  async until(at: number): Promise<boolean> {
    for (;;) {
      if (this.halted()) return false;
      const wait = at - this.deps.clock.now();
      if (wait <= 0) return true;
      await this.pause(wait);
    }
  }

  /** Wakes every sleeper when the sender starts draining (one listener per job); returns the unsubscribe. */
  wakeOnDrain(): () => void {
    const wake = () => {
      for (const resolve of this.sleepers) resolve();
      this.sleepers.clear();
    };
    this.deps.draining.addEventListener('abort', wake, { once: true });
    return () => this.deps.draining.removeEventListener('abort', wake);
  }
}

/** Waits shorter than this are not slept (a timer's grain on a busy event loop). */
const TIMER_GRAIN_MS = 2;

/** After Redis lost an account's sends, the next waits this much beyond the last PostgreSQL knows: a replica that lost its lock may still write. */
const REBUILD_MARGIN_MS = 1_000;

/** A pace slot: send at `at`, or none (the lane yields; `chatWaitUntil` when only the chat's pace holds it). */
export type Slot = { go: true; at: number } | { go: false; chatWaitUntil?: number };

/** A lane's turn to write: `onWritten` goes with its request (transports that tell), `ended` once its send is over. */
export interface WriteTurn {
  onWritten?: () => void;
  ended: () => void;
}

/** What the pace held the job back for, for the job's end: when its next slot comes, when its cap frees one. */
export interface PaceHolds {
  nextTokenAt: number;
  capUntil: number;
}

export interface JobPaceOptions {
  perMinute: number;
  lanes: number;
  spare: () => number;
}

export class JobPace {
  /** the account's ban-safety limits now (human gap, caps lowered by the warm-up); null: the plain pace */
  readonly limits: SendLimits | null;
  readonly lanes: number;
  /** the slots' interval (the configured pace less core's PACE_MARGIN), and the configured one the writes keep */
  readonly intervalMs: number;
  readonly configuredIntervalMs: number;
  readonly chatPerMinute: number;
  /** the furthest ahead a first part may reserve its slot; the longest a lane waits for a chat not due yet */
  readonly firstPartMaxWaitMs: number;
  readonly gateMaxWaitMs: number;
  readonly partSpacingMs: number;
  private readonly burst: number;
  /** the account's per-chat caps' windows (a chat cap), read once per job */
  private readonly chatWindows: ReturnType<typeof chatWindows>;
  private readonly batches: PaceBatches;
  /** when the job's lanes went ahead from their slots, and when its requests were really written */
  private written: WrittenPace = { tat: 0 };
  private sent: WrittenPace = { tat: 0 };
  private writing: Promise<void> = Promise.resolve();
  private leftAt = 0;
  private lastSlotAt = 0;
  private lastWriteAt = 0;
  private holds: PaceHolds = { nextTokenAt: 0, capUntil: 0 };

  constructor(
    private readonly deps: JobDeps,
    private readonly run: RunForSend,
    private readonly token: string,
    private readonly transport: Transport,
    private readonly stop: JobStop,
    options: JobPaceOptions,
  ) {
    this.limits = gateLimits(run.account, deps.clock.now());
    this.chatWindows = chatWindows(run.account);
    // human pacing is one send after another: lanes would only wait for each other's gaps
    this.lanes = this.limits?.delay ? 1 : options.lanes;
    this.intervalMs = 60_000 / pacedPerMinute(options.perMinute);
    this.configuredIntervalMs = 60_000 / options.perMinute;
    this.burst = deps.settings.rateBurst;
    // lanes queue one behind the other: a lane's slot is up to (lanes - 1) intervals behind
    const behind = (this.lanes - 1) * this.intervalMs;
    this.firstPartMaxWaitMs = deps.settings.maxInlineWaitMs + behind;
    this.gateMaxWaitMs = Math.max(deps.settings.maxInlineWaitMs, deps.settings.maxGateWaitMs) + behind;
    this.chatPerMinute = deps.settings.chatPacePerMinute[run.account.platform] ?? 0;
    this.partSpacingMs = Math.max(this.intervalMs, this.chatPerMinute > 0 ? 60_000 / this.chatPerMinute : 0);
    this.batches = new PaceBatches(deps, run.account.id, token, 60_000 / this.intervalMs, this.burst, options.spare);
  }

  /** Reserves a slot for one part at most `maxWaitMs` ahead: the account's and, with `chatId` on a platform with one, the chat's. Nothing is slept. */
  async slot(chatId: string | null, maxWaitMs: number, leadMs = 0): Promise<Slot> {
    const { deps, run } = this;
    const now = deps.clock.now();
    const chat = { chatId: chatId ?? '', perMinute: chatId === null ? 0 : this.chatPerMinute };
    const result = this.limits
      ? await this.reserveSafe(this.limits, now, chat, maxWaitMs)
      : chat.perMinute === 0
        ? await this.batches.reserve(maxWaitMs)
        : await deps.pace.reserve(run.account.id, this.token, now, 60_000 / this.intervalMs, this.burst, chat, maxWaitMs);
    if ('lockLost' in result || 'rebuild' in result) {
      this.stop.with('lock-lost');
      return { go: false };
    }
    if (!result.reserved) {
      const limit = gateLimit(result.limitedBy);
      if (limit.gate === 'chat') return { go: false, chatWaitUntil: now + result.waitMs };
      // a cap met: the job ends and its run continues when the window frees a slot
      if (limit.key === 'cap') {
        this.holds.capUntil = Math.max(this.holds.capUntil, now + result.waitMs);
        deps.events.emit('account:cap', { runId: run.runId, accountId: run.account.id, waitMs: result.waitMs });
      }
      this.holds.nextTokenAt = Math.max(this.holds.nextTokenAt, now + result.waitMs - leadMs);
      this.stop.with('pace');
      return { go: false };
    }
    this.lastSlotAt = Math.max(this.lastSlotAt, now + result.waitMs);
    return { go: true, at: now + result.waitMs };
  }

  /** Takes the chat's limits for a send whose account slot was reserved before its chat was known (a claim): its caps' windows, its pace. */
  async chatNow(chatId: string): Promise<{ ok: true } | { ok: false; until: number; code?: string | null }> {
    const now = this.deps.clock.now();
    const windows = this.chatWindows;
    if (windows.length > 0) {
      const id = this.run.account.id;
      const held = await this.deps.pace.chats
        .reserve(id, this.token, now, chatId, this.run.runId, windows, (since) => this.deps.repo.accounts.chatSends(id, since))
        .catch((error: unknown) => {
          if (!isTransientDbError(error)) throw error;
          this.stop.with('storage');
          return { reserved: false as const, lockLost: true as const };
        });
      if ('lockLost' in held) {
        this.stop.with('lock-lost');
        return { ok: false, until: now };
      }
      if (!held.reserved) return { ok: false, until: now + held.waitMs, code: holdCode(held.limitedBy) };
    }
    if (this.chatPerMinute <= 0) return { ok: true };
    const result = await this.deps.pace.reserveChat(this.run.account.id, this.token, now, { chatId, perMinute: this.chatPerMinute }, 0);
    if ('lockLost' in result) {
      this.stop.with('lock-lost');
      return { ok: false, until: now };
    }
    return result.reserved ? { ok: true } : { ok: false, until: now + result.waitMs };
  }

  /** Sleeps until the slot, then as long as the job's record of when its lanes went ahead asks (a lane that woke late pushes the next). */
  async waitForSlot(at: number): Promise<boolean> {
    const { deps, stop } = this;
    // a slot within a timer's grain is taken at once: going that early stays inside the pace's margin
    if (at - deps.clock.now() >= TIMER_GRAIN_MS) await stop.pause(at - deps.clock.now());
    for (;;) {
      if (stop.halted()) return false;
      const now = deps.clock.now();
      const wait = writeWaitMs(this.written, now, this.configuredIntervalMs, this.burst);
      if (wait < TIMER_GRAIN_MS) {
        this.written = afterWrite(this.written, now, this.configuredIntervalMs);
        return true;
      }
      await stop.pause(wait);
    }
  }

  /** Sleeps until `at` without taking a slot (a lane typing first claims then). False on a stop. */
  async wakeBefore(at: number): Promise<boolean> {
    if (at - this.deps.clock.now() >= TIMER_GRAIN_MS) await this.stop.pause(at - this.deps.clock.now());
    return !this.stop.halted();
  }

  /** When a request due at its slot can really be written: the job's own writes and the least gap may hold it past the slot. */
  writableAt(slotAt: number): number {
    const own = Math.max(
      writeWaitMs(this.written, slotAt, this.configuredIntervalMs, this.burst),
      writeWaitMs(this.sent, slotAt, this.configuredIntervalMs, this.burst),
    );
    return slotAt + Math.max(own, this.gapWaitMs(slotAt));
  }

  chatGapMs(writtenAt: number): number {
    return writtenAt > 0 && this.chatPerMinute > 0 ? writtenAt + 60_000 / this.chatPerMinute - this.deps.clock.now() : 0;
  }

  /** Right before a request: keeps the job's writes one configured interval apart, however long the statement before took. */
  async spaceWrite(): Promise<WriteTurn> {
    const { deps } = this;
    for (;;) {
      const previous = this.writing;
      await previous;
      if (this.writing !== previous) continue;
      this.foldLeftAt();
      const now = deps.clock.now();
      const wait = Math.max(writeWaitMs(this.sent, now, this.configuredIntervalMs, this.burst), this.gapWaitMs(now));
      if (wait < TIMER_GRAIN_MS) {
        this.sent = afterWrite(this.sent, now, this.configuredIntervalMs);
        this.lastWriteAt = now;
        return this.takeTurn();
      }
      await deps.sleep(Math.ceil(wait));
    }
  }

  held(): PaceHolds {
    return { ...this.holds };
  }

  /** What the account's next job must wait for (its pace when the job's writes ran late, its human gap), given with the lock's release. */
  floors(lockLost: boolean): PaceFloors {
    this.foldLeftAt();
    const tat = Math.max(this.written.tat, this.sent.tat);
    const late = tat > this.lastSlotAt + this.intervalMs || lockLost;
    const min = this.limits?.minDelayMs ?? 0;
    return {
      paceMs: tat === 0 || !late ? 0 : tat,
      gapMs: min <= 0 || this.lastWriteAt === 0 ? 0 : this.lastWriteAt + min + SEND_GAP_MARGIN_MS,
    };
  }

  /** The job waits for this request to leave before its next goes (transports that tell when). */
  private takeTurn(): WriteTurn {
    if (!this.transport.reportsWrites || this.configuredIntervalMs < TIMER_GRAIN_MS) return { ended: () => undefined };
    let settle!: () => void;
    this.writing = new Promise<void>((resolve) => (settle = resolve));
    return {
      onWritten: () => {
        this.leftAt = Math.max(this.leftAt, this.deps.clock.now());
        settle();
      },
      ended: () => settle(),
    };
  }

  private foldLeftAt(): void {
    if (this.leftAt === 0) return;
    this.sent = { tat: Math.max(this.sent.tat, this.leftAt + this.configuredIntervalMs) };
    this.lastWriteAt = Math.max(this.lastWriteAt, this.leftAt);
  }

  private gapWaitMs(now: number): number {
    const min = this.limits?.minDelayMs ?? 0;
    if (min <= 0 || this.lastWriteAt === 0) return 0;
    return Math.max(0, this.lastWriteAt + min + SEND_GAP_MARGIN_MS - now);
  }

  /** Reserves under the account's limits (one round trip; two more, once, when Redis lost the account's sends). */
  private async reserveSafe(limits: SendLimits, now: number, chat: ChatPace, maxWaitMs: number): Promise<SafeReservation> {
    const { deps } = this;
    const id = this.run.account.id;
    const perMinute = 60_000 / this.intervalMs;
    const args = { gapAfterMs: limits.delay ? drawSendDelayMs(limits.delay, deps.random) : 0, hourlyCap: limits.hourlyCap, dailyCap: limits.dailyCap };
    const first = await deps.pace.safe.reserve(id, this.token, now, perMinute, this.burst, chat, maxWaitMs, args);
    if (!('rebuild' in first)) return first;
    try {
      const sends = await deps.repo.accounts.recentSends(id, new Date(now - DAY_MS - REBUILD_MARGIN_MS));
      const nextAt = sends.lastAt === null || limits.minDelayMs === 0 ? 0 : sends.lastAt + limits.minDelayMs + this.configuredIntervalMs + REBUILD_MARGIN_MS;
      await deps.pace.safe.rebuild(id, this.token, now, nextAt, sends.times);
      deps.events.emit('pace:rebuilt', { accountId: id, sends: sends.times.length });
    } catch (error) {
      if (!isTransientDbError(error)) throw error;
      this.stop.with('storage');
      return { reserved: false, lockLost: true };
    }
    const again = await deps.pace.safe.reserve(id, this.token, deps.clock.now(), perMinute, this.burst, chat, maxWaitMs, args);
    return 'rebuild' in again ? { reserved: false, lockLost: true } : again;
  }
}

/** How far ahead a fast account's slots are reserved in one call, so a fast job makes a few Redis calls instead of one per send. */
export const RESERVE_AHEAD_MS = 20;

/** The job's plain pace reservations, one Redis call at a time: lanes that ask while a call is out reserve together in the next. */
export class PaceBatches {
  private readonly reservations: GroupCommit<number, PaceReservation>;
  private ahead: { at: number; until: number }[] = [];

  constructor(
    private readonly deps: JobDeps,
    accountId: string,
    token: string,
    perMinute: number,
    burst: number,
    spare: () => number,
  ) {
    const aheadCount = deps.settings.maxInlineWaitMs < RESERVE_AHEAD_MS ? 0 : Math.floor(RESERVE_AHEAD_MS / (60_000 / perMinute));
    this.reservations = new GroupCommit(async (maxWaitMs, requests): Promise<PaceReservation[]> => {
      const now = deps.clock.now();
      const taken = this.takeAhead(now, maxWaitMs, requests.length);
      if (taken.length === requests.length) return taken;
      const count = requests.length - taken.length;
      const extra = Math.max(0, Math.min(aheadCount, spare()));
      const result = await deps.pace.reserveMany(accountId, token, now, perMinute, burst, maxWaitMs, count + extra);
      // refused: every lane of the call is told why (a lost lock voids what was reserved ahead)
      if (!result.reserved) {
        if ('lockLost' in result) this.ahead = [];
        return [...taken, ...Array.from({ length: count }, () => result)];
      }
      const until = now + deps.settings.maxInlineWaitMs;
      this.ahead.push(...result.waitsMs.slice(count).map((waitMs) => ({ at: now + waitMs, until })));
      return [...taken, ...result.waitsMs.slice(0, count).map((waitMs) => ({ reserved: true as const, waitMs }))];
    });
  }

  reserve(maxWaitMs: number): Promise<PaceReservation> {
    const [slot] = this.takeAhead(this.deps.clock.now(), maxWaitMs, 1);
    return slot ? Promise.resolve(slot) : this.reservations.ask(maxWaitMs);
  }

  /** Up to `count` slots reserved ahead, earliest first; one not taken within the inline wait of its call is dropped. */
  private takeAhead(now: number, maxWaitMs: number, count: number): PaceReservation[] {
    while (this.ahead.length > 0 && this.ahead[0]!.until < now) this.ahead.shift();
    const taken: PaceReservation[] = [];
    while (taken.length < count && this.ahead.length > 0 && this.ahead[0]!.at - now <= maxWaitMs) {
      taken.push({ reserved: true, waitMs: Math.max(0, this.ahead.shift()!.at - now) });
    }
    return taken;
  }
}
