/**
 * How many jobs one BullMQ worker of a sender runs at once, at most.
 *
 * Why more than one worker per process: a BullMQ worker (6.x, `mainLoop`) fetches jobs one
 * after the other, and starts none of those it fetched until a fetch comes back empty. While
 * jobs keep arriving, each one fetched waits for the fetches after it, one Redis round trip
 * each, which on busy cores delays a burst of first runs (first-start; bench/results/HISTORY.md).
 * Several workers fetch side by side, and each one's run of fetches is short. Each costs one more
 * blocking Redis connection and its own stalled-job check, so not one per slot.
 */
export const SLOTS_PER_WORKER = 32;

/**
 * `concurrency` (SENDER_CONCURRENCY) split between as few workers as hold SLOTS_PER_WORKER
 * each, as evenly as it goes: the slots always add up to `concurrency`.
 */
export function workerSlots(concurrency: number): number[] {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`concurrency must be a whole number of at least 1, got ${concurrency}`);
  const workers = Math.ceil(concurrency / SLOTS_PER_WORKER);
  const base = Math.floor(concurrency / workers);
  return Array.from({ length: workers }, (_, i) => base + (i < concurrency % workers ? 1 : 0));
}
