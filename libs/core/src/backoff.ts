/** Delay before retry `attempt` (1-based): exponential from `baseMs`, capped at `maxMs`, with equal jitter so many chats' retries do not line up. */
export function retryDelayMs(attempt: number, random: () => number = Math.random, baseMs = 1000, maxMs = 300_000): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + (exp / 2) * random());
}

/** Deterministic 32-bit hash (FNV-1a) of a string, for jitter that must not change between ticks. */
export function hash32(value: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    h ^= value.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Deterministic delay in [0, maxMs) for one occurrence of one campaign: only ever added. */
export function occurrenceJitterMs(campaignId: string, occurrence: Date, maxMs: number): number {
  if (maxMs <= 0) return 0;
  return hash32(`${campaignId}@${occurrence.toISOString()}`) % maxMs;
}
