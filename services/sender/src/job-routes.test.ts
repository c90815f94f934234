import { JobRoutes, sweepGoneSenders } from './job-routes.js';

let now = 0;
const routes = (holder: string | null, draining = new AbortController()) => {
  const r = new JobRoutes({ me: 'sender:a', holders: async (ids) => ids.map(() => holder), draining: draining.signal, now: () => now });
  return { r, draining };
};

test("a held account's next job goes to its holder's own queue, a telegram_user lease naming its sender too", async () => {
  const { r } = routes('sender:b');
  r.seen(['sender:a', 'sender:b']);
  expect(await r.to('acc-1')).toBe('sender:b');
  const tg = routes('sender:b:tg').r;
  tg.seen(['sender:a', 'sender:b']);
  expect(await tg.to('acc-1')).toBe('sender:b');
});

test('the shared queue: before a pass saw the senders, and for a free account', async () => {
  expect(await routes('sender:b').r.to('acc-1')).toBeNull();
  const free = routes(null).r;
  free.seen(['sender:a']);
  expect(await free.to('acc-1')).toBeNull();
});

test('a holder gone from the registry still holding the lease: the job waits on this sender for it to end, or goes to the shared queue if this one stops', async () => {
  const { r, draining } = routes('sender:c');
  r.seen(['sender:a', 'sender:b']);
  expect(await r.to('acc-1')).toBe('sender:a');
  draining.abort();
  expect(await r.to('acc-1')).toBeNull();
});

test('an account let go to even the spread: its jobs go to the sender meant to take it until one holds it, for a minute at most', async () => {
  let holder: string | null = null;
  now = 1_000;
  const r = new JobRoutes({ me: 'sender:a', holders: async (ids) => ids.map(() => holder), draining: new AbortController().signal, now: () => now });
  r.seen(['sender:a', 'sender:b', 'sender:c']);
  r.handedTo('acc-1', 'sender:b');
  expect(await r.to('acc-1')).toBe('sender:b');
  expect(await r.to('acc-2')).toBeNull();
  // another took it first: the lease names where its jobs go
  holder = 'sender:c';
  expect(await r.to('acc-1')).toBe('sender:c');
  holder = null;
  now += 60_001;
  expect(await r.to('acc-1')).toBeNull();
  // a taker gone from the registry gets nothing
  r.handedTo('acc-1', 'sender:b');
  r.seen(['sender:a', 'sender:c']);
  expect(await r.to('acc-1')).toBeNull();
});

test('a draining sender routes nothing more to itself, and still to the others', async () => {
  const { r, draining } = routes('sender:a');
  r.seen(['sender:a', 'sender:b']);
  expect(await r.to('acc-1')).toBe('sender:a');
  draining.abort();
  expect(await r.to('acc-1')).toBeNull();
  const other = routes('sender:b', draining).r;
  other.seen(['sender:a', 'sender:b']);
  expect(await other.to('acc-1')).toBe('sender:b');
});

test("a pass moves the jobs of each gone sender's queue, and only those; one still locked waits for the next pass", async () => {
  const moved: string[] = [];
  const logged: object[] = [];
  const queue = {
    senders: async () => ['sender:a', 'sender:gone', 'sender:locked'],
    moveToShared: async (s: string) => (moved.push(s), s === 'sender:locked' ? ('locked' as const) : 3),
  };
  await sweepGoneSenders(queue, ['sender:a', 'sender:b'], { info: (o) => logged.push(o) });
  expect(moved).toEqual(['sender:gone', 'sender:locked']);
  expect(logged).toEqual([{ sender: 'sender:gone', moved: 3 }]);
});
