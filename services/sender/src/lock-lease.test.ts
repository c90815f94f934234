import { ManualClock } from '@metronome/core';
import type { JobDeps } from './deps.js';
import { JobStop } from './job-stop.js';
import { LockLease } from './lock-lease.js';

// The account lock as the job knows it locally: surely its own for the TTL from the request of
// its last confirmed acquire or renewal, less a sixth of the TTL; a refused renewal ends it.

const TTL_MS = 3_000;

test('held until a sixth of the TTL before the end of the last confirmed renewal, measured from its request', () => {
  const lease = new LockLease(TTL_MS, 10_000);
  expect(lease.heldAt(12_499)).toBe(true);
  expect(lease.heldAt(12_500)).toBe(false);
  lease.renewed(11_000);
  expect(lease.heldAt(13_499)).toBe(true);
  expect(lease.heldAt(13_500)).toBe(false);
  // a renewal answered late, asked before the last, moves nothing back
  lease.renewed(10_500);
  expect(lease.heldAt(13_499)).toBe(true);
});

test('a lease Redis refused is not held, and tells its listener at once', () => {
  const lease = new LockLease(TTL_MS, 10_000);
  let told = 0;
  lease.whenLost(() => told++);
  lease.lose();
  expect(told).toBe(1);
  expect(lease.heldAt(10_000)).toBe(false);
});

function stopOn(lease: LockLease) {
  const clock = new ManualClock(10_000);
  const wakes: (() => void)[] = [];
  const deps = {
    clock,
    draining: new AbortController().signal,
    sleep: (ms: number) => new Promise<void>((wake) => wakes.push(() => (clock.advance(ms), wake()))),
  } as unknown as JobDeps;
  return { clock, stop: new JobStop(deps, lease) };
}

test("the job's stop asks the lease on the job's clock, and stops with lock-lost once it has run out", () => {
  const { clock, stop } = stopOn(new LockLease(TTL_MS, 10_000));
  expect(stop.leaseHeld()).toBe(true);
  expect(stop.reason).toBeNull();
  clock.set(12_500);
  expect(stop.leaseHeld()).toBe(false);
  expect(stop.reason).toBe('lock-lost');
  expect(stop.halted()).toBe(true);
});

test('a lease lost wakes the lanes sleeping for their slots, halted', async () => {
  const lease = new LockLease(TTL_MS, 10_000);
  const { stop } = stopOn(lease);
  const woke = stop.until(60_000);
  lease.lose();
  await expect(woke).resolves.toBe(false);
  expect(stop.reason).toBe('lock-lost');
});
