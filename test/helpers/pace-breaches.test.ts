import { paceBreaches } from './platform-record.js';
import type { SandboxMessage } from './stack.js';

// The pace judge of the fault tests: 600/min and a burst of 1 allow 11 stamps in a 1 s window,
// more only as far as the sandbox says its stamps may be late.

const T0 = 1_800_000_000_000;
const message = (account: string, receivedAt: number, stampSlackMs = 0): SandboxMessage => ({
  seq: 0,
  account,
  chatId: `c-${receivedAt}`,
  idempotencyKey: `k-${receivedAt}`,
  partIndex: 0,
  partCount: 1,
  part: { type: 'text', text: 'x' },
  receivedAt,
  stampSlackMs,
  answeredAt: receivedAt + 30,
});
/** `n` sends 100 ms apart from `from` (600/min on the dot). */
const paced = (account: string, from: number, n: number) => Array.from({ length: n }, (_, i) => message(account, from + i * 100));

test('sends on the pace are no breach; three more in one second are, with the window named', () => {
  expect(paceBreaches(paced('a', T0, 30), 600, 1)).toEqual([]);
  const bunched = [...paced('a', T0, 30), message('a', T0 + 1_010), message('a', T0 + 1_020), message('a', T0 + 1_030)];
  expect(paceBreaches(bunched, 600, 1)).toEqual([
    { account: 'a', windowMs: 1_000, most: 14, limit: 11, from: T0 + 100, slackMs: 0, gapsMs: [...Array(9).fill(100), 10, 10, 10, 70] },
  ]);
});

test('stamps the sandbox took late count the window as long as their slack', () => {
  // a loop held 300 ms stamps three sends that came 100 ms apart together, at the end of the hold
  // (sent at 1,000, 1,100 and 1,200 ms, each stamped at 1,299 ms)
  const held = [...paced('a', T0, 10), ...[0, 1, 2].map(() => message('a', T0 + 1_299, 300)), ...paced('a', T0 + 1_300, 10)];
  expect(paceBreaches(held, 600, 1)).toEqual([]);
  // the same stamps with no slack reported are a breach
  expect(
    paceBreaches(
      held.map((m) => ({ ...m, stampSlackMs: 0 })),
      600,
      1,
    ).map((b) => b.windowMs),
  ).toEqual([1_000]);
});

test('each account is judged on its own', () => {
  const items = [...paced('a', T0, 20), ...paced('b', T0 + 5, 20)];
  expect(paceBreaches(items, 600, 1)).toEqual([]);
});
