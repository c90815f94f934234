import { ManualClock } from '@metronome/core';
import type { HeldAccountRow } from '@metronome/db';
import { letIdleGo, startAccountHolder, type AccountHolderDeps } from './account-holder.js';

const row = (i: number): HeldAccountRow => ({
  id: `acc-${String(i).padStart(4, '0')}`,
  platform: 'whatsapp',
  externalId: null,
  credentials: null,
  proxy: null,
  connection: 'always',
  sending: false,
});

/** Waits until the abort, as the holder's sleeps do; the clock never moves in these tests. */
const untilAborted = (_ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));

/** A holder on one sender whose clock never moves and whose connects never wait; `over` sets what a test looks at. */
const depsWith = (over: Partial<AccountHolderDeps> & Pick<AccountHolderDeps, 'accounts' | 'registry' | 'connections'>): AccountHolderDeps => ({
  me: 'sender-1',
  connectRate: { take: async () => 0, burst: 5 },
  open: (r) => ({ id: r.id, externalId: null, credentials: null, proxy: null }),
  clock: new ManualClock(0),
  logger: { info: () => undefined, warn: () => undefined },
  random: () => 0.5,
  sleep: untilAborted,
  everyMs: 5_000,
  connectsPerSecond: 1_000,
  ...over,
});

test('a sender opens up to 256 connections at once (a connect took 5-11 s with 250 opening while 250 sent)', async () => {
  const asked: string[] = [];
  const deps = depsWith({
    accounts: { alwaysConnected: async () => Array.from({ length: 300 }, (_, i) => row(i)) },
    registry: { beat: async () => ['sender-1'], leave: async () => undefined, leaseHolders: async (ids) => ids.map(() => null) },
    connections: [
      {
        platform: 'whatsapp',
        held: async () => [],
        // a handshake that never ends: each one stays opening
        hold: (account) => (asked.push(account.id), new Promise<boolean>(() => undefined)),
        letGo: async () => true,
      },
    ],
  });
  const holder = startAccountHolder(deps);
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  expect(asked).toHaveLength(256);
  await holder.stop();
});

test('an account let go to a newcomer is named for it, so its jobs follow there; one a send still uses stays, unnamed', async () => {
  const rows = Array.from({ length: 4 }, (_, i) => row(i));
  const handed: [string, string][] = [];
  const holder = startAccountHolder(
    depsWith({
      accounts: { alwaysConnected: async () => rows },
      registry: { beat: async () => ['sender-1', 'sender-2'], leave: async () => undefined, leaseHolders: async (ids) => ids.map(() => 'sender-1') },
      connections: [
        {
          platform: 'whatsapp',
          held: async () => rows.map((r) => ({ accountId: r.id, busy: false })),
          // the transport refuses one: a send began on it meanwhile
          letGo: async (id) => id !== 'acc-0000',
          hold: async () => true,
        },
      ],
      handedTo: (id, to) => handed.push([id, to]),
    }),
  );
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  await holder.stop();
  expect(handed.length).toBeGreaterThanOrEqual(1);
  expect(handed.every(([id, to]) => id !== 'acc-0000' && to === 'sender-2')).toBe(true);
});

test('free accounts left to a sender below its share: their jobs follow there, and sends waiting here to open them step aside', async () => {
  const rows = Array.from({ length: 11 }, (_, i) => row(i));
  const mine = rows.slice(0, 6).map((r) => r.id);
  const handed: [string, string][] = [];
  const withdrawn: string[][] = [];
  const kept: number[] = [];
  const opened: string[] = [];
  const holder = startAccountHolder(
    depsWith({
      accounts: { alwaysConnected: async () => rows },
      // a rolling restart: sender-1 holds 6 of 10, the restarted sender-2 one (acc-0010), 4 are free
      registry: {
        beat: async () => ['sender-1', 'sender-2'],
        leave: async () => undefined,
        leaseHolders: async (ids) => ids.map((id) => (mine.includes(id) ? 'sender-1' : id === 'acc-0010' ? 'sender-2' : null)),
      },
      connections: [
        {
          platform: 'whatsapp',
          held: async () => mine.map((accountId) => ({ accountId, busy: true })),
          letGo: async () => false,
          hold: async (account) => (opened.push(account.id), true),
          turns: async ({ holdersOpen, leftToOthers }) => (kept.push(holdersOpen.size), withdrawn.push([...leftToOthers].sort()), leftToOthers.size),
        },
      ],
      handedTo: (id, to) => handed.push([id, to]),
    }),
  );
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  await holder.stop();
  const free = rows.slice(6, 10).map((r) => r.id);
  // the free ones, and the one sender-2 opened: sends waiting here to open them step aside
  expect(withdrawn[0]).toEqual([...free, 'acc-0010']);
  // every account listed is the holders' to open: sends here wait for them
  expect(kept[0]).toBe(11);
  expect(handed.filter(([id]) => free.includes(id)).sort()).toEqual(free.map((id) => [id, 'sender-2']));
  expect(opened).toEqual([]);
});

test('a newcomer gets the accounts held longest: those taken a pass ago (a stopped sender’s) do not move again at once', async () => {
  const rows = Array.from({ length: 20 }, (_, i) => row(i));
  const clock = new ManualClock(0);
  let beats = 0;
  let reads = 0;
  let sleeps = 0;
  const handed: string[] = [];
  const holder = startAccountHolder(
    depsWith({
      clock,
      // three passes five seconds apart, then wait for the stop
      sleep: async (ms, signal) => (++sleeps >= 3 ? untilAborted(ms, signal) : clock.advance(ms)),
      accounts: { alwaysConnected: async () => rows },
      // alone for two passes, then sender-2 is back
      registry: {
        beat: async () => (++beats <= 2 ? ['sender-1'] : ['sender-1', 'sender-2']),
        leave: async () => undefined,
        leaseHolders: async (ids) => ids.map(() => 'sender-1'),
      },
      connections: [
        {
          platform: 'whatsapp',
          // its own ten from the first pass, ten more (taken from a stopped sender) from the second
          held: async () => rows.slice(++reads === 1 ? 10 : 0).map((r) => ({ accountId: r.id, busy: false })),
          letGo: async () => true,
          hold: async () => true,
        },
      ],
      handedTo: (id) => handed.push(id),
    }),
  );
  for (let i = 0; i < 30 && handed.length === 0; i++) await new Promise((r) => setImmediate(r));
  await holder.stop();
  expect(handed.sort()).toEqual(rows.slice(10).map((r) => r.id));
});

test('a stop leaves the registry at once, though the pass under way is still waiting on PostgreSQL', async () => {
  const left: string[] = [];
  let answer!: () => void;
  const holder = startAccountHolder(
    depsWith({
      accounts: { alwaysConnected: () => new Promise<HeldAccountRow[]>((r) => (answer = () => r([]))) },
      registry: { beat: async () => ['sender-1'], leave: async (me) => void left.push(me), leaseHolders: async (ids) => ids.map(() => null) },
      connections: [],
    }),
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  const stopped = holder.stop();
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  expect(left).toEqual(['sender-1']);
  answer();
  await stopped;
});

test('on a stop, each idle connection is let go for the others to take; one a send uses stays until the drain ends', async () => {
  const let_: [string, boolean][] = [];
  const connection = (platform: 'whatsapp' | 'telegram_user', held: { accountId: string; busy: boolean }[]) => ({
    platform,
    held: async () => held,
    hold: async () => true,
    letGo: async (id: string, handOver: boolean) => (let_.push([id, handOver]), true),
  });
  const gone = await letIdleGo([
    connection('whatsapp', [
      { accountId: 'wa-idle', busy: false },
      { accountId: 'wa-sending', busy: true },
    ]),
    connection('telegram_user', [{ accountId: 'tg-idle', busy: false }]),
  ]);
  expect(gone).toBe(2);
  expect(let_.sort()).toEqual([
    ['tg-idle', true],
    ['wa-idle', true],
  ]);
});

test('the holder asks the connect pace for up to its burst of slots at once, not one round trip per account', async () => {
  const asked: string[] = [];
  let inFlight = 0;
  let most = 0;
  const holder = startAccountHolder(
    depsWith({
      accounts: { alwaysConnected: async () => Array.from({ length: 12 }, (_, i) => row(i)) },
      registry: { beat: async () => ['sender-1'], leave: async () => undefined, leaseHolders: async (ids) => ids.map(() => null) },
      connectRate: {
        burst: 5,
        take: async () => {
          most = Math.max(most, ++inFlight);
          await new Promise((r) => setImmediate(r));
          inFlight--;
          return 0;
        },
      },
      connections: [{ platform: 'whatsapp', held: async () => [], hold: async (account) => (asked.push(account.id), true), letGo: async () => true }],
    }),
  );
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  await holder.stop();
  expect(asked).toHaveLength(12);
  expect(most).toBe(5);
});
