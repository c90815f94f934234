/** How many jobs one BullMQ worker of a sender runs at once, at most. */
export const SLOTS_PER_WORKER = 32;

/** SENDER_CONCURRENCY split as evenly as it goes between as few workers as hold SLOTS_PER_WORKER each. */
export function workerSlots(concurrency: number): number[] {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`concurrency must be a whole number of at least 1, got ${concurrency}`);
  const workers = Math.ceil(concurrency / SLOTS_PER_WORKER);
  const base = Math.floor(concurrency / workers);
  return Array.from({ length: workers }, (_, i) => base + (i < concurrency % workers ? 1 : 0));
}
