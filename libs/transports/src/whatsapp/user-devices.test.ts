import { ManualClock } from '@metronome/core';
import { UserDevices, type DeviceListStore } from './user-devices.js';

const TTL = 5 * 60_000;
const alice = [{ user: '111', device: 0, server: 'lid' }];
const bob = [
  { user: '222', device: 0, server: 'lid' },
  { user: '222', device: 2, server: 'lid' },
];

/** The shared store in memory, as Redis keeps it (PX), counting its calls; `mode` makes it fail or never answer. */
function memoryStore(clock: ManualClock) {
  const rows = new Map<string, { value: string; until: number }>();
  const calls = { get: 0, set: 0, del: 0 };
  const o = { mode: 'ok' as 'ok' | 'fail' | 'hang' };
  const answer = async <T>(value: () => T): Promise<T> => {
    if (o.mode === 'fail') throw new Error('connection is closed');
    if (o.mode === 'hang') return new Promise<T>(() => undefined);
    return value();
  };
  const store: DeviceListStore = {
    get: (a, users) => (calls.get++, answer(() => users.map((u) => ((rows.get(`${a} ${u}`)?.until ?? 0) > clock.now() ? rows.get(`${a} ${u}`)!.value : null)))),
    set: (a, entries, ttlMs) => (
      calls.set++, answer(() => void entries.forEach((e) => rows.set(`${a} ${e.user}`, { value: e.value, until: clock.now() + ttlMs })))
    ),
    del: (a, users) => (calls.del++, answer(() => void users.forEach((u) => rows.delete(`${a} ${u}`)))),
  };
  return { store, rows, calls, o };
}

function setup(extra: { maxEntries?: number; answerMs?: number } = {}) {
  const clock = new ManualClock(1_000_000);
  const shared = memoryStore(clock);
  const warnings: unknown[] = [];
  const logger = { warn: (obj: unknown) => warnings.push(obj) } as never;
  const replica = () => new UserDevices({ store: shared.store, clock, logger, answerMs: 20, ...extra });
  return { clock, shared, warnings, replica };
}

test('a new socket, on this replica or another, reads the lists the last one learnt: one store round trip, then none', async () => {
  const { shared, replica } = setup();
  const here = replica();
  const first = here.forAccount('acc');
  await first.mset!([
    { key: '111', value: alice },
    { key: '222', value: bob },
  ]);
  expect(shared.calls.set).toBe(1);
  // the same socket: memory only
  expect(await first.mget!(['111', '222'])).toEqual({ '111': alice, '222': bob });
  expect(shared.calls.get).toBe(0);

  for (const cache of [here.forAccount('acc'), replica().forAccount('acc')]) {
    const before = shared.calls.get;
    expect(await cache.mget!(['111', '222', '333'])).toEqual({ '111': alice, '222': bob });
    expect(shared.calls.get - before).toBe(1);
    expect(await cache.get('111')).toEqual(alice);
    expect(shared.calls.get - before).toBe(1);
    // only the unknown user is asked again
    expect(await cache.get('333')).toBeUndefined();
    expect(shared.calls.get - before).toBe(2);
  }
  // another account's socket knows none of them
  expect(await here.forAccount('other').mget!(['111'])).toEqual({});
});

test('a list is trusted for Baileys’ five minutes from when WhatsApp gave it, wherever it is read', async () => {
  const { clock, replica } = setup();
  const here = replica();
  await here.forAccount('acc').set('111', alice);
  clock.advance(TTL - 60_000);
  // read by the other replica a minute before it runs out: it runs out there at the same time
  const there = replica().forAccount('acc');
  expect(await there.get('111')).toEqual(alice);
  clock.advance(60_000);
  expect(await there.get('111')).toBeUndefined();
});

test('a device change Baileys drops stays dropped for the socket even when the store missed the delete', async () => {
  const { shared, replica } = setup();
  const cache = replica().forAccount('acc');
  await cache.set('222', bob);
  shared.o.mode = 'fail';
  await cache.del('222');
  shared.o.mode = 'ok';
  expect(shared.rows.size).toBe(1);
  expect(await cache.get('222')).toBeUndefined();
  // a new list from WhatsApp replaces it
  await cache.set('222', alice);
  expect(await cache.get('222')).toEqual(alice);
});

test('a store that fails or does not answer is a miss, writes still land in memory, and it is told at warn once a minute', async () => {
  const { clock, shared, warnings, replica } = setup();
  const cache = replica().forAccount('acc');
  for (const mode of ['fail', 'hang'] as const) {
    shared.o.mode = mode;
    await expect(cache.mget!(['999'])).resolves.toEqual({});
    await expect(cache.set('111', alice)).resolves.toBeUndefined();
    await expect(cache.del('333')).resolves.toBeUndefined();
    expect(await cache.get('111')).toEqual(alice);
  }
  expect(warnings).toHaveLength(1);
  clock.advance(60_000);
  await cache.get('999');
  expect(warnings).toHaveLength(2);
});

test('this process keeps at most maxEntries, dropping the oldest first, and forgets what ran out', async () => {
  const { clock, replica } = setup({ maxEntries: 3 });
  const devices = replica();
  const a = devices.forAccount('a');
  await a.set('1', alice);
  await a.set('2', alice);
  await devices.forAccount('b').set('3', bob);
  await a.set('4', alice);
  expect(devices.kept).toBe(3);
  clock.advance(TTL);
  devices.forAccount('c');
  expect(devices.kept).toBe(0);
});
