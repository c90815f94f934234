import { planSpread, type Clock } from '@metronome/core';
import type { HeldAccountRow } from '@metronome/db';
import { senderOfHolder } from '@metronome/redis';
import type { TransportAccount } from '@metronome/transports';

/** A platform's connections as the account holder drives them (platform-transports.ts builds them). */
export interface HeldConnections {
  platform: 'whatsapp' | 'telegram_user';
  /** open or opening here, `busy` when a send or a pairing uses it */
  held(): Promise<{ accountId: string; busy: boolean }[]>;
  /** false when none opened (another replica holds it, or it failed) */
  hold(account: TransportAccount): Promise<boolean>;
  /** closes the connection, then lets its lease go (`handOver`: for another sender to take); false when in use */
  letGo(accountId: string, handOver: boolean): Promise<boolean>;
  /** sends waiting here to open an account the holders keep connected leave it to them; those left to other senders step aside (a count) */
  turns?(o: { holdersOpen: ReadonlySet<string>; leftToOthers: ReadonlySet<string> }): Promise<number>;
}

export interface AccountHolderDeps {
  me: string;
  accounts: { alwaysConnected(platforms: HeldConnections['platform'][]): Promise<HeldAccountRow[]> };
  registry: {
    beat(sender: string, now: number, ttlMs: number): Promise<string[]>;
    leave(sender: string): Promise<void>;
    leaseHolders(accountIds: readonly string[]): Promise<(string | null)[]>;
  };
  /** cluster-wide: 0 when a connection may open now, else the ms to wait; `burst` slots back to back at most */
  connectRate: { take(now: number): Promise<number>; burst: number };
  connections: HeldConnections[];
  open(row: HeldAccountRow): TransportAccount;
  clock: Clock;
  logger: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
  random(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  everyMs: number;
  connectsPerSecond: number;
  /** after each pass: the accounts this sender holds or is opening, on every platform */
  heldNow?(held: number): void;
  /** after each heartbeat: the senders alive (routes and the sweep of gone senders' queues, job-routes.ts) */
  seen?(senders: string[]): Promise<void>;
  /** an account let go to even the spread, and the sender meant to take it */
  handedTo?(accountId: string, sender: string): void;
}

// connections opening at once on one sender (each waits ~2.5 s on a fresh lease, then a handshake: 5-11 s with 250 opening while 250 send); the longest wait before a failed one is tried again
const MAX_OPENING = 256;
const MAX_RETRY_MS = 5 * 60_000;

/**
 * Keeps every always-connected account connected on some sender (issue 53): each pass beats the heartbeat, asks libs/core
 * `planSpread` what to take and let go, and opens at the cluster-wide connect pace. It runs beside the jobs, never in a send.
 */
export function startAccountHolder(d: AccountHolderDeps): { stop(): Promise<void> } {
  const stopping = new AbortController();
  const opening = new Map<string, string>();
  // resolved whenever an opening ends: a pass with more to take waits for it instead of ending
  let openingEnded = () => {};
  const anOpeningEnds = () => new Promise<void>((resolve) => (openingEnded = resolve));
  const retry = new Map<string, { n: number; at: number }>();
  const heldSince = new Map<string, number>();
  const intervalMs = 1_000 / d.connectsPerSecond;
  const maxMoves = Math.max(1, Math.floor((d.connectsPerSecond * d.everyMs) / 1_000));

  /** until an opening ends, or `ms` passed, or the holder stops */
  async function oneEnds(ms: number): Promise<void> {
    const waited = new AbortController();
    const stop = () => waited.abort();
    stopping.signal.addEventListener('abort', stop, { once: true });
    await Promise.race([anOpeningEnds(), d.sleep(ms, waited.signal)]);
    waited.abort();
    stopping.signal.removeEventListener('abort', stop);
  }

  async function slots(n: number, deadline: number): Promise<number> {
    for (;;) {
      if (stopping.signal.aborted) return 0;
      const now = d.clock.now();
      const waits = await Promise.all(Array.from({ length: n }, () => d.connectRate.take(now)));
      const got = waits.filter((w) => w === 0).length;
      if (got > 0) return got;
      const wait = Math.min(...waits);
      if (d.clock.now() + wait > deadline) return 0;
      // up to `n` slots a round trip (one at a time fell far short of the pace under load); jittered, so senders do not ask at once
      await d.sleep(wait + d.random() * intervalMs, stopping.signal);
    }
  }

  function open(c: HeldConnections, row: HeldAccountRow): void {
    opening.set(row.id, c.platform);
    void (async () => (stopping.signal.aborted ? false : c.hold(d.open(row))))()
      .catch(() => false)
      .then((opened) => {
        opening.delete(row.id);
        openingEnded();
        const n = (retry.get(row.id)?.n ?? 0) + 1;
        if (opened) retry.delete(row.id);
        else retry.set(row.id, { n, at: d.clock.now() + Math.min(MAX_RETRY_MS, d.everyMs * 2 ** n) });
      });
  }

  async function pass(): Promise<void> {
    const started = d.clock.now();
    const senders = await d.registry.beat(d.me, started, d.everyMs * 3);
    await d.seen?.(senders).catch((err: unknown) => d.logger.warn({ err }, 'could not sweep the queues of gone senders'));
    const rows = await d.accounts.alwaysConnected(d.connections.map((c) => c.platform));
    const takes: [HeldConnections, HeldAccountRow][] = [];
    const stillHeld = new Set<string>();
    let heldHere = opening.size;
    for (const c of d.connections) {
      const mine = rows.filter((r) => r.platform === c.platform);
      // an on_demand account is opened by its jobs only, and closed here once idle with no run open
      const onDemand = new Set(mine.filter((r) => r.connection === 'on_demand').map((r) => r.id));
      const ids = mine.filter((r) => !onDemand.has(r.id)).map((r) => r.id);
      const [leases, held] = await Promise.all([d.registry.leaseHolders(ids), c.held()]);
      const holders = new Map<string, string>();
      ids.forEach((id, i) => leases[i] && holders.set(id, senderOfHolder(leases[i])));
      const heldIds = new Set(
        [...held.map((h) => h.accountId), ...[...opening].filter(([, p]) => p === c.platform).map(([id]) => id)].filter((id) => !onDemand.has(id)),
      );
      heldHere += held.filter((h) => !opening.has(h.accountId)).length;
      const busy = new Set(held.filter((h) => h.busy).map((h) => h.accountId));
      for (const id of heldIds) {
        stillHeld.add(id);
        if (!heldSince.has(id)) heldSince.set(id, started);
      }
      const plan = planSpread({ me: d.me, senders, accounts: ids, holders, held: heldIds, busy, heldSince, maxMoves });
      const byId = new Map(mine.map((r) => [r.id, r]));
      const idle = held.filter((h) => onDemand.has(h.accountId) && !h.busy && !byId.get(h.accountId)!.sending).map((h) => h.accountId);
      for (const a of plan.letGo)
        void c.letGo(a, true).then(
          (gone) => gone && d.handedTo?.(a, plan.takers.get(a)!),
          () => undefined,
        );
      for (const a of idle) void c.letGo(a, false).catch(() => undefined);
      // free accounts left to senders below their share, and those another opened meanwhile: their jobs go there, sends here step aside
      const letGo = new Set(plan.letGo);
      const leftToOthers = new Set([...plan.takers.keys()].filter((a) => !letGo.has(a)));
      for (const a of leftToOthers) d.handedTo?.(a, plan.takers.get(a)!);
      for (const id of ids) if (holders.has(id) && holders.get(id) !== d.me) leftToOthers.add(id);
      const withdrawn = (await c.turns?.({ holdersOpen: new Set(ids), leftToOthers }).catch(() => 0)) ?? 0;
      // sending accounts too: their jobs go to the sender meant to take them (job-routes.ts), so the spread holds while runs send
      const due = plan.take.filter((id) => (retry.get(id)?.at ?? 0) <= started);
      takes.push(...due.map((id): [HeldConnections, HeldAccountRow] => [c, byId.get(id)!]));
      if (plan.letGo.length + idle.length + due.length + withdrawn > 0)
        d.logger.info(
          {
            platform: c.platform,
            senders: senders.length,
            share: plan.share,
            held: heldIds.size,
            letGo: plan.letGo.length,
            toTake: due.length,
            withdrawn,
          },
          'always-connected accounts moving',
        );
    }
    for (const id of heldSince.keys()) if (!stillHeld.has(id)) heldSince.delete(id);
    d.heldNow?.(heldHere + takes.length);
    const deadline = Math.max(started + d.everyMs, d.clock.now() + d.everyMs / 2);
    let granted = 0;
    for (const [i, [c, row]] of takes.entries()) {
      while (opening.size >= MAX_OPENING && d.clock.now() < deadline && !stopping.signal.aborted) await oneEnds(deadline - d.clock.now());
      if (opening.size >= MAX_OPENING) break;
      if (granted === 0) granted = await slots(Math.min(d.connectRate.burst, takes.length - i, MAX_OPENING - opening.size), deadline);
      if (granted-- === 0) break;
      open(c, row);
    }
  }

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      const started = d.clock.now();
      await pass().catch((err: unknown) => d.logger.warn({ err }, 'always-connected pass failed'));
      await d.sleep(Math.max(0, d.everyMs - (d.clock.now() - started)), stopping.signal);
    }
  })();

  return {
    stop: async () => {
      stopping.abort();
      // out of the registry before the pass under way ends (a beat it began lands first): the others count this sender gone at once
      const left = d.registry.leave(d.me).catch((err: unknown) => d.logger.warn({ err }, 'could not leave the sender registry'));
      await loop;
      await left;
    },
  };
}

/** On a stop: closes each idle connection held here and lets its lease go, for the others to open while the busy ones finish. */
export async function letIdleGo(connections: HeldConnections[]): Promise<number> {
  const idle = async (c: HeldConnections) => (await c.held()).filter((h) => !h.busy).map((h) => c.letGo(h.accountId, true).catch(() => false));
  const gone = await Promise.all((await Promise.all(connections.map(idle))).flat());
  return gone.filter(Boolean).length;
}
