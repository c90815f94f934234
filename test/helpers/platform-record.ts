import { sandbox, type SandboxMessage, type Stack } from './stack.js';

// The sandbox's record is the judge of sending promises: what the platform received, and when.

/** Everything the sandbox received, in arrival order. */
export async function received(stack: Stack): Promise<SandboxMessage[]> {
  const { items } = await sandbox<{ items: SandboxMessage[] }>(stack, '/sandbox/messages');
  return items;
}

/** Each (account, chat, part) the platform received more than once. */
export function repeats(items: SandboxMessage[]): string[] {
  const seen = new Map<string, number>();
  for (const m of items) {
    const key = `${m.account}|${m.chatId}|${m.partIndex}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen].filter(([, n]) => n > 1).map(([key]) => key);
}

/** The most requests one account's record holds in any window of `windowMs` (both ends included). */
export function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! > windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/**
 * The windows in which an account received more than `burst + pace × W` (CONTRACT: never too
 * fast, judged at the platform), for W = 1 s and 10 s.
 */
export function paceBreaches(items: SandboxMessage[], perMinute: number, burst: number): { account: string; windowMs: number; most: number; limit: number }[] {
  const byAccount = new Map<string, number[]>();
  for (const m of items) byAccount.set(m.account, [...(byAccount.get(m.account) ?? []), m.receivedAt]);
  const breaches: { account: string; windowMs: number; most: number; limit: number }[] = [];
  for (const [account, times] of byAccount) {
    for (const windowMs of [1_000, 10_000]) {
      const limit = Math.floor(burst + (perMinute / 60_000) * windowMs);
      const most = busiestWindow(times, windowMs);
      if (most > limit) breaches.push({ account, windowMs, most, limit });
    }
  }
  return breaches;
}
