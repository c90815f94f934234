import { ManualClock } from '@metronome/core';
import type { JobDeps } from './deps.js';
import { JobStop } from './job-pace.js';
import { LockLease } from './run-job.js';

// The account lock as the job knows it locally (run-job.ts LockLease): surely its own for the TTL
// from the request of its last confirmed acquire or renewal, less a sixth of the TTL; a refused
// renewal ends it. The job's stop (job-pace.ts JobStop) reads it on the job's clock.

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

test('a lease Redis refused is not held, and a renewal confirmed after does not bring it back', () => {
  const lease = new LockLease(TTL_MS, 10_000);
  lease.lose();
  expect(lease.heldAt(10_000)).toBe(false);
  lease.renewed(10_000);
  expect(lease.heldAt(10_000)).toBe(false);
});

test("the job's stop halts with lock-lost once the lease has run out on the job's clock", () => {
  const clock = new ManualClock(10_000);
  const deps = { clock, draining: new AbortController().signal } as unknown as JobDeps;
  const stop = new JobStop(deps, new LockLease(TTL_MS, 10_000));
  expect(stop.halted()).toBe(false);
  expect(stop.leaseHeld()).toBe(true);
  expect(stop.reason).toBeNull();
  clock.set(12_500);
  expect(stop.halted()).toBe(true);
  expect(stop.reason).toBe('lock-lost');
});
