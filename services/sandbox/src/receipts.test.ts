import { SandboxReceipts } from './receipts.js';

/** Polls `check` until it holds (the receipts go on timers of a few ms). */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// The sandbox's receipts (receipts.ts) with a recording post in place of HTTP.

function setup(answer: (body: { receipts: { messageId: string; status: string }[] }) => { ignored: number } | null = () => ({ ignored: 0 })) {
  const posts: { bearer: string | null; receipts: { messageId: string; status: string; at: string }[]; pending: boolean }[] = [];
  const receipts: SandboxReceipts = new SandboxReceipts(async (_url, bearer, body) => {
    const b = body as { receipts: { messageId: string; status: string; at: string }[] };
    // a post on its way is still pending
    posts.push({ bearer, receipts: b.receipts, pending: receipts.view().pending });
    return answer(b);
  });
  afterEach(() => receipts.close());
  return { receipts, posts };
}

const message = (n: number, account = 'acc') => ({ account, messageId: `msg-${n}`, chatId: `chat-${n}`, bearer: 'Bearer key-1' });

describe('receipts', () => {
  const { receipts, posts } = setup();

  test('a delivery, a read and both twice, with the key the send carried and the times told', async () => {
    receipts.update({ url: 'http://metronome.invalid/v1/platform/receipts', deliveredAfterMs: 10, readAfterMs: 20, twice: true });
    receipts.accepted(message(1), 1_000_000);
    expect(receipts.view().pending).toBe(true);
    await eventually('four receipts posted', async () => receipts.view().items.length === 4, 5_000, 10);
    expect(receipts.view().pending).toBe(false);
    expect(posts.every((p) => p.bearer === 'Bearer key-1' && p.pending)).toBe(true);
    expect(
      receipts
        .view()
        .items.map((r) => [r.status, r.at])
        .sort(),
    ).toEqual([
      ['delivered', new Date(1_000_010).toISOString()],
      ['delivered', new Date(1_000_010).toISOString()],
      ['read', new Date(1_000_020).toISOString()],
      ['read', new Date(1_000_020).toISOString()],
    ]);
  });
});

describe('stopped accounts', () => {
  const { receipts } = setup();

  test("a stopped account's receipts are withheld, and go when it is no longer stopped", async () => {
    receipts.update({ url: 'http://metronome.invalid/v1/platform/receipts', stoppedAccounts: ['quiet'] });
    receipts.accepted(message(1, 'quiet'), 1_000_000);
    receipts.accepted(message(2, 'loud'), 1_000_000);
    await eventually('the other account delivered', async () => receipts.view().items.length === 1, 5_000, 10);
    expect(receipts.view().items.map((r) => r.account)).toEqual(['loud']);
    receipts.update({ stoppedAccounts: [] });
    await eventually('the withheld delivery posted', async () => receipts.view().items.length === 2, 5_000, 10);
    expect(receipts.view().items[1]).toMatchObject({ account: 'quiet', messageId: 'msg-1', status: 'delivered' });
  });
});

describe('not known yet', () => {
  let ignoreFirst = true;
  const { receipts, posts } = setup(() => {
    const ignored = ignoreFirst ? 1 : 0;
    ignoreFirst = false;
    return { ignored };
  });

  test('a batch the answer partly ignored goes again, logged once', async () => {
    receipts.update({ url: 'http://metronome.invalid/v1/platform/receipts' });
    receipts.accepted(message(1), 1_000_000);
    await eventually('the first post answered', async () => posts.length === 1 && receipts.view().items.length === 1, 5_000, 1);
    // the retry is still to go: pending until it is posted
    expect(receipts.view().pending).toBe(true);
    await eventually('posted again', async () => posts.length === 2, 5_000, 20);
    expect(receipts.view().items).toHaveLength(1);
    await eventually('nothing left to go', async () => !receipts.view().pending, 5_000, 20);
  });
});

describe('flushMs', () => {
  const { receipts, posts } = setup();

  test('receipts falling due within flushMs of each other go in one post per account', async () => {
    receipts.update({ url: 'http://metronome.invalid/v1/platform/receipts', deliveredAfterMs: 0, flushMs: 300 });
    receipts.accepted(message(1), 1_000_000);
    await new Promise((r) => setTimeout(r, 100));
    receipts.accepted(message(2), 1_000_000);
    receipts.accepted(message(3, 'other'), 1_000_000);
    await eventually('three receipts posted', async () => receipts.view().items.length === 3, 5_000, 10);
    expect(posts.map((p) => p.receipts.map((r) => r.messageId)).sort()).toEqual([['msg-1', 'msg-2'], ['msg-3']]);
  });
});

describe('accountsPerPost', () => {
  type Group = { key: string; receipts: { messageId: string }[] };
  const posts: { bearer: string | null; accounts: Group[] }[] = [];
  let ignoreFirst = true;
  const receipts = new SandboxReceipts(async (_url, bearer, body) => {
    const b = body as { accounts: Group[] };
    posts.push({ bearer, accounts: b.accounts });
    // the first post: the second receipt of its first group is not known yet
    const accounts = b.accounts.map((_, g) => ({ ignoredIndexes: ignoreFirst && g === 0 ? [1] : [] }));
    ignoreFirst = false;
    return { ignored: accounts.reduce((n, a) => n + a.ignoredIndexes.length, 0), accounts };
  });
  afterEach(() => receipts.close());
  const keyed = (n: number, account: string) => ({ account, messageId: `msg-${n}`, chatId: `chat-${n}`, bearer: `Bearer key-${account}` });

  test("several accounts' receipts in one post, each group with its key; only the receipts an answer ignored go again", async () => {
    receipts.update({ url: 'http://metronome.invalid/v1/platform/receipts', deliveredAfterMs: 0, flushMs: 100, accountsPerPost: 2 });
    receipts.accepted(keyed(1, 'a'), 1_000_000);
    receipts.accepted(keyed(2, 'a'), 1_000_000);
    receipts.accepted(keyed(3, 'b'), 1_000_000);
    receipts.accepted(keyed(4, 'c'), 1_000_000);
    await eventually('the retry posted', async () => posts.length === 3 && !receipts.view().pending, 5_000, 10);
    const groups = (p: (typeof posts)[number]) => p.accounts.map((g) => [g.key, g.receipts.map((r) => r.messageId)]);
    // two accounts a post at most, no bearer: the keys are in the body
    expect(posts.map((p) => p.bearer)).toEqual([null, null, null]);
    expect(posts.slice(0, 2).map(groups)).toEqual([
      [
        ['key-a', ['msg-1', 'msg-2']],
        ['key-b', ['msg-3']],
      ],
      [['key-c', ['msg-4']]],
    ]);
    expect(groups(posts[2]!)).toEqual([['key-a', ['msg-2']]]);
    // logged once each, with the post that first carried it
    expect(receipts.view().items.map((r) => [r.messageId, r.post])).toEqual([
      ['msg-1', 1],
      ['msg-2', 1],
      ['msg-3', 1],
      ['msg-4', 2],
    ]);
  });
});
