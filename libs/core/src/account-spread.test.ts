import { planSpread, type SpreadView } from './account-spread.js';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const view = (v: Partial<SpreadView> & Pick<SpreadView, 'me' | 'senders' | 'accounts'>): SpreadView => ({
  holders: new Map(),
  held: new Set(),
  busy: new Set(),
  maxMoves: 1_000,
  ...v,
});
const holding = (sender: string, accounts: string[]) => accounts.map((a) => [a, sender] as const);

/** Every sender plans on the same view, moves what it plans, until nothing moves (the cluster settling). */
function settle(senders: string[], accounts: string[], start: Map<string, string>, maxMoves = 1_000): { held: Map<string, string>; passes: number } {
  const holders = new Map(start);
  for (let pass = 1; pass < 100; pass++) {
    let moved = 0;
    for (const me of senders) {
      const held = new Set([...holders].filter(([, h]) => h === me).map(([a]) => a));
      const plan = planSpread(view({ me, senders, accounts, holders, held, maxMoves }));
      for (const a of plan.letGo) holders.delete(a);
      for (const a of plan.take) holders.set(a, me);
      moved += plan.letGo.length + plan.take.length;
    }
    if (moved === 0) return { held: holders, passes: pass };
  }
  throw new Error('never settled');
}
const countsOf = (held: Map<string, string>, senders: string[]) => senders.map((s) => [...held.values()].filter((h) => h === s).length);

test('a lone sender takes every free account', () => {
  const plan = planSpread(view({ me: 'a', senders: ['a'], accounts: ids('acc', 5) }));
  expect(plan.take.sort()).toEqual(ids('acc', 5));
  expect(plan.letGo).toEqual([]);
});

test('free accounts are taken up to the share, each sender in an order of its own', () => {
  const accounts = ids('acc', 100);
  const a = planSpread(view({ me: 'a', senders: ['a', 'b'], accounts }));
  const b = planSpread(view({ me: 'b', senders: ['a', 'b'], accounts }));
  expect([a.take.length, b.take.length, a.share]).toEqual([50, 50, 50]);
  expect(a.take).not.toEqual(b.take);
});

test('an account another sender holds is never taken: it moves only when its holder lets it go', () => {
  const accounts = ids('acc', 4);
  const plan = planSpread(view({ me: 'b', senders: ['a', 'b'], accounts, holders: new Map(holding('a', accounts)) }));
  expect(plan.take).toEqual([]);
});

test('a new sender gets its share by hand-over: the holder lets the excess go, the newcomer takes it', () => {
  const accounts = ids('acc', 1_000);
  const holders = new Map(holding('a', accounts));
  const held = new Set(accounts);
  const old = planSpread(view({ me: 'a', senders: ['a', 'b'], accounts, holders, held }));
  expect(old.letGo).toHaveLength(500);
  expect(old.take).toEqual([]);
  for (const a of old.letGo) holders.delete(a);
  const newcomer = planSpread(view({ me: 'b', senders: ['a', 'b'], accounts, holders }));
  expect(newcomer.take.sort()).toEqual([...old.letGo].sort());
  // the old holder, at its share, takes none of what it let go back
  expect(planSpread(view({ me: 'a', senders: ['a', 'b'], accounts, holders, held: new Set(accounts.filter((x) => holders.get(x) === 'a')) })).take).toEqual([]);
});

test('the accounts held longest are let go first: one just taken (a kill, a restart) does not move again at once', () => {
  const own = ids('own', 500);
  const taken = ids('taken', 500);
  const accounts = [...own, ...taken];
  const holders = new Map(holding('a', accounts));
  // `a` has held its own since 1,000 and took a stopped sender's at 90,000; that sender is back
  const heldSince = new Map([...own.map((x) => [x, 1_000] as const), ...taken.map((x) => [x, 90_000] as const)]);
  const plan = planSpread(view({ me: 'a', senders: ['a', 'b'], accounts, holders, held: new Set(accounts), heldSince, maxMoves: 125 }));
  expect(plan.letGo).toHaveLength(125);
  expect(plan.letGo.every((x) => x.startsWith('own'))).toBe(true);
});

test('while more accounts are connected nowhere than the senders’ passes move, none is handed over: the free ones go first', () => {
  const accounts = ids('acc', 1_000);
  // a rolling restart: `a` took 625 of the stopped sender's and its own before `b` came back; 375 are connected nowhere
  const held = new Set(accounts.slice(0, 625));
  const holders = new Map(holding('a', [...held]));
  const a = planSpread(view({ me: 'a', senders: ['a', 'b'], accounts, holders, held, maxMoves: 125 }));
  expect(a.letGo).toEqual([]);
  expect(planSpread(view({ me: 'b', senders: ['a', 'b'], accounts, holders, maxMoves: 125 })).take).toHaveLength(375);
  // once `b` has taken all but a pass's worth for each, `a` hands its excess over
  for (const x of accounts.slice(625, 1_000 - 250)) holders.set(x, 'b');
  expect(planSpread(view({ me: 'a', senders: ['a', 'b'], accounts, holders, held, maxMoves: 125 })).letGo).toHaveLength(125);
});

test('the free accounts a sender leaves to one below its share are meant for that one: its sends waiting to open them give them up', () => {
  const accounts = ids('acc', 1_000);
  // a rolling restart: `a` holds 625, the restarted `b` none yet; 375 are connected nowhere
  const held = new Set(accounts.slice(0, 625));
  const holders = new Map(holding('a', [...held]));
  const a = planSpread(view({ me: 'a', senders: ['a', 'b'], accounts, holders, held, maxMoves: 125 }));
  expect(a.take).toEqual([]);
  expect([...a.takers.keys()].sort()).toEqual(accounts.slice(625).sort());
  expect(new Set(a.takers.values())).toEqual(new Set(['b']));
  // `b` takes them itself, leaving none to others
  const b = planSpread(view({ me: 'b', senders: ['a', 'b'], accounts, holders, maxMoves: 125 }));
  expect(b.take).toHaveLength(375);
  expect(b.takers.size).toBe(0);
  // alone, `a` keeps every free account for itself
  expect(planSpread(view({ me: 'a', senders: ['a'], accounts, holders, held, maxMoves: 125 })).takers.size).toBe(0);
});

test('each account let go is meant for a sender below its share, the furthest below first, so two newcomers each get theirs', () => {
  const accounts = ids('acc', 900);
  const holders = new Map([...holding('a', accounts.slice(0, 800)), ...holding('b', accounts.slice(800))]);
  const plan = planSpread(view({ me: 'a', senders: ['a', 'b', 'c'], accounts, holders, held: new Set(accounts.slice(0, 800)), maxMoves: 1_000 }));
  expect(plan.letGo).toHaveLength(500);
  expect([...plan.takers.keys()].sort()).toEqual([...plan.letGo].sort());
  const to = [...plan.takers.values()];
  // b holds 100 and c none, each short of 300: c's first 100, then both in turn
  expect([to.filter((t) => t === 'b').length, to.filter((t) => t === 'c').length]).toEqual([200, 300]);
  expect(to.slice(0, 100).every((t) => t === 'c')).toBe(true);
});

test.each([
  [2, 1_000],
  [3, 1_000],
  [4, 1_000],
  [3, 10],
  [4, 7],
])('%i senders, %i accounts: spread within ±20 %% of even, whatever the start', (n, total) => {
  const senders = ids('s', n);
  const accounts = ids('acc', total);
  for (const start of [new Map<string, string>(), new Map(holding('s0', accounts))]) {
    const { held } = settle(senders, accounts, start);
    expect(held.size).toBe(total);
    const even = total / n;
    for (const c of countsOf(held, senders)) expect(Math.abs(c - even)).toBeLessThanOrEqual(Math.max(1, 0.2 * even));
  }
});

test('a fourth sender moves its share, a pass at a time when moves are bounded', () => {
  const senders = ids('s', 3);
  const accounts = ids('acc', 900);
  const three = settle(senders, accounts, new Map()).held;
  const { held, passes } = settle([...senders, 's3'], accounts, three, 50);
  expect(countsOf(held, [...senders, 's3'])).toEqual([225, 225, 225, 225]);
  // 75 each to move, 50 a pass: two passes that move, one that finds nothing to
  expect(passes).toBe(3);
});

test('within the slack nothing moves', () => {
  const accounts = ids('acc', 200);
  const held = new Set(accounts.slice(0, 110));
  const holders = new Map([...holding('a', accounts.slice(0, 110)), ...holding('b', accounts.slice(110))]);
  expect(planSpread(view({ me: 'a', senders: ['a', 'b'], accounts, holders, held })).letGo).toEqual([]);
});

test('a sender that died: its accounts, once their leases expire, go to the others', () => {
  const accounts = ids('acc', 10);
  const holders = new Map(holding('a', accounts.slice(0, 5)));
  const plan = planSpread(view({ me: 'a', senders: ['a'], accounts, holders, held: new Set(accounts.slice(0, 5)) }));
  expect(plan.take.sort()).toEqual(accounts.slice(5));
});

test('accounts in use by a send are never let go; accounts no longer listed are, unless in use', () => {
  const accounts = ids('acc', 4);
  const held = new Set([...accounts, 'gone', 'gone-busy']);
  const plan = planSpread(
    view({ me: 'a', senders: ['a', 'b'], accounts, holders: new Map(holding('a', [...held])), held, busy: new Set(['acc0', 'acc1', 'gone-busy']) }),
  );
  expect(plan.letGo.sort()).toEqual(['acc2', 'acc3', 'gone']);
});

test('no hand-over when no other sender is below its share', () => {
  const accounts = ids('acc', 4);
  const plan = planSpread(view({ me: 'a', senders: ['a', 'dead'], accounts, holders: new Map(holding('a', accounts)), held: new Set(accounts) }));
  // 'dead' still listed but holding nothing is below its share: a hand-over is planned
  expect(plan.letGo).toHaveLength(2);
  const none = planSpread(
    view({
      me: 'a',
      senders: ['a', 'b'],
      accounts: accounts.slice(0, 3),
      holders: new Map([...holding('a', accounts.slice(0, 2)), ...holding('b', ['acc2', 'acc3'])]),
      held: new Set(accounts.slice(0, 2)),
    }),
  );
  expect(none.letGo).toEqual([]);
});
