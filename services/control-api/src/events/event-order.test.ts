import { nextEvents, startOrder } from './event-order.js';

test('ids in a row go out at once, in order', () => {
  const r = nextEvents(startOrder(10), [11, 12, 13], [], 0);
  expect(r.ids).toEqual([11, 12, 13]);
  expect(r.order.lastId).toBe(13);
});

test('a missing id holds the ones above it back while its transaction may still commit', () => {
  const first = nextEvents(startOrder(10), [11, 13, 14], [], 1_000, 2_000);
  expect(first.ids).toEqual([11]);
  expect(first.order.lastId).toBe(11);
  // 12 commits: it and the ones held back go out, in id order
  const second = nextEvents(first.order, [12, 13, 14], [], 1_500, 2_000);
  expect(second.ids).toEqual([12, 13, 14]);
  expect(second.order.waitingSince.size).toBe(0);
});

test('the wait counts from when the gap was first seen, not from each read', () => {
  let order = nextEvents(startOrder(0), [2], [], 0, 2_000).order;
  order = nextEvents(order, [2], [], 1_900, 2_000).order;
  expect(order.lastId).toBe(0);
  const passed = nextEvents(order, [2], [], 2_000, 2_000);
  expect(passed.ids).toEqual([2]);
  expect([...passed.order.late.keys()]).toEqual([1]);
});

test('an id passed as missing that turns up later still goes out, once', () => {
  const passed = nextEvents(startOrder(0), [3], [], 5_000, 0);
  expect(passed.ids).toEqual([3]);
  expect([...passed.order.late.keys()].sort()).toEqual([1, 2]);
  const found = nextEvents(passed.order, [4], [2], 6_000, 0);
  expect(found.ids).toEqual([2, 4]);
  expect([...found.order.late.keys()]).toEqual([1]);
  // a late id reported again (read twice) is not handed on twice
  expect(nextEvents(found.order, [], [2], 7_000, 0).ids).toEqual([]);
});

test('missing ids are looked for only for a while', () => {
  const passed = nextEvents(startOrder(0), [2], [], 0, 0, 60_000);
  expect(passed.order.late.has(1)).toBe(true);
  expect(nextEvents(passed.order, [], [], 60_000, 0, 60_000).order.late.size).toBe(0);
});

test('ids at or below the last one handed on are not handed on again', () => {
  expect(nextEvents(startOrder(5), [4, 5, 6], [], 0).ids).toEqual([6]);
});
