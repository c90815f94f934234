import { ManualClock } from '@metronome/core';
import { CONNECT_BURST, ConnectTurns, HOLDERS_OPEN_MS } from './connect-turns.js';
import type { SocketLease } from './socket-lease.js';

// The pace is a stand-in here (slots given by the test, each take answered a tick later, as a round trip);
// test/platforms/whatsapp-sockets.test.ts runs the pool with libs/redis' ConnectRate on Redis.

const opened: ConnectTurns[] = [];
afterEach(() => opened.splice(0).forEach((t) => t.close()));

function setup(held: Record<string, 'mine' | 'other'> = {}) {
  const clock = new ManualClock(0);
  let slots = 0;
  let inFlight = 0;
  const takes = { all: 0, most: 0 };
  const pace = {
    take: async () => {
      takes.all++;
      takes.most = Math.max(takes.most, ++inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      return slots > 0 ? (slots--, 0) : 40;
    },
  };
  const lease = { peek: async (id: string) => held[id] ?? 'free' } as Pick<SocketLease, 'peek'> as SocketLease;
  const waits: number[] = [];
  const timers = { setTimeout: (fn: () => void, ms: number) => (waits.push(ms), setImmediate(fn), { cancel: () => undefined }) };
  const turns = new ConnectTurns({ pace, lease, holderId: 'me', clock, timers, random: () => 0.5 });
  opened.push(turns);
  const order: string[] = [];
  const take = (id: string) => turns.before(id).then((ok) => (order.push(`${id}:${ok}`), ok));
  return { turns, take, order, takes, waits, clock, give: (n: number) => (slots += n) };
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

test('sends take their turns in order, up to CONNECT_BURST takes in one round trip, each wait jittered', async () => {
  const { take, order, takes, waits, give } = setup();
  const ids = Array.from({ length: 7 }, (_, i) => `a${i}`);
  give(6);
  const all = Promise.all(ids.map(take));
  await settle();
  expect(order).toEqual(ids.slice(0, 6).map((id) => `${id}:true`));
  expect(takes.most).toBe(CONNECT_BURST);
  // refused: it waits the pace's wait and up to as much again (random 0.5 here)
  expect(waits[0]).toBe(60);
  give(1);
  await all;
  expect(order.at(-1)).toBe('a6:true');
});

test('a lease not free takes no turn; the holder’s connect lets a waiting send go; a close ends the waits', async () => {
  const { turns, take, order, takes } = setup({ mine: 'mine', elsewhere: 'other' });
  await Promise.all([take('mine'), take('elsewhere')]);
  expect(takes.all).toBe(0);
  const waiting = [take('a'), take('b')];
  await settle();
  turns.grant('b');
  await waiting[1];
  turns.close();
  await waiting[0];
  expect(order).toEqual(['mine:true', 'elsewhere:true', 'b:true', 'a:false']);
  expect(await turns.before('c')).toBe(false);
});

test('sends waiting for a turn are told which accounts wait, and give their turns up for the accounts another sender is meant to open', async () => {
  const { turns, take, order, give } = setup();
  const waiting = ['a', 'b', 'c'].map(take);
  await settle();
  expect([...turns.waiting()].sort()).toEqual(['a', 'b', 'c']);
  expect(turns.withdraw(new Set(['b', 'x']))).toBe(1);
  await settle();
  expect(order).toEqual(['b:false']);
  expect([...turns.waiting()].sort()).toEqual(['a', 'c']);
  give(2);
  await Promise.all(waiting);
  expect(order).toEqual(['b:false', 'a:true', 'c:true']);
});

test('a send to open an account the holders keep connected takes no turn of its own: the holder’s open lets it go, or after HOLDERS_OPEN_MS its own turn', async () => {
  const { turns, take, order, takes, clock, give } = setup();
  turns.holdersOpen(new Set(['kept', 'late']));
  const kept = take('kept');
  await settle();
  expect(takes.all).toBe(0);
  turns.grant('kept');
  await kept;
  const late = take('late');
  await settle();
  expect(takes.all).toBe(0);
  // no holder opened it: past the patience it takes a turn, as one the holders do not keep does
  clock.advance(HOLDERS_OPEN_MS);
  give(2);
  await Promise.all([late, take('on-demand')]);
  expect(order).toEqual(['kept:true', 'late:true', 'on-demand:true']);
});

test('a send to open an account the holders keep connected, held by another sender, is told no at once: it asks that sender for nothing', async () => {
  const { turns, take, order, takes } = setup({ elsewhere: 'other', mine: 'mine' });
  turns.holdersOpen(new Set(['elsewhere', 'mine']));
  await Promise.all([take('elsewhere'), take('mine')]);
  expect(order).toEqual(['elsewhere:false', 'mine:true']);
  expect(takes.all).toBe(0);
});
