import { WorkerPool } from './worker-pool.js';

test('the base in workers of at most 32, then whole workers of 32 as held accounts pass each 32; never fewer', () => {
  const made: number[] = [];
  const pool = new WorkerPool(128, (slots) => made.push(slots));
  expect(made).toEqual([32, 32, 32, 32]);
  pool.hold(1);
  expect(made).toEqual([32, 32, 32, 32, 32]);
  expect(pool.size).toBe(160);
  pool.hold(32);
  expect(pool.size).toBe(160);
  pool.hold(100);
  expect(pool.size).toBe(256);
  pool.hold(10);
  expect(pool.size).toBe(256);
  expect(pool.workers).toHaveLength(8);
});

test('a small base is one worker', () => {
  const made: number[] = [];
  new WorkerPool(8, (slots) => made.push(slots));
  expect(made).toEqual([8]);
});
