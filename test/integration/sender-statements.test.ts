import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// What one job costs PostgreSQL: every repository method is one statement, so counting the
// calls counts the statements. A small run (the first run of a campaign of three chats) is the
// burst a thousand new campaigns make at once.

let h: SenderHarness;
beforeEach(async () => {
  h = await startSenderHarness({});
});
afterEach(async () => {
  await h.close();
});

/** Counts the calls of every method of `repo` into `calls`, by name. */
function counted<T extends object>(repo: T, calls: Map<string, number>): T {
  return new Proxy(repo, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(key), (calls.get(String(key)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

// The harness's sleeps are instant: the second and third lanes reach their slots while the first
// lane's claim is out, and share the next claim statement (JobWrites in writes.ts); likewise their
// pace reservations share one Redis call (job-pace.ts, PaceBatches).
test('a run of three chats on three lanes: load, start, a claim for the first lane and one for the two that came to their slots meanwhile, one last write with the counts, the account health and the finish', async () => {
  const { tenantId, accountId } = await h.seedAccount({ groupConcurrency: 3, maxSendPerMinute: 600 });
  const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b', 'c'], parts: [{ type: 'text', text: 'hi' }] });
  const calls = new Map<string, number>();
  const repo = h.deps.repo;
  h.deps.repo = { runs: counted(repo.runs, calls), accounts: counted(repo.accounts, calls), mediaRefs: counted(repo.mediaRefs, calls) };
  // the job's load and start go through the sender's shared statements (statements.ts), which hold the repository itself
  const markRunningMany = repo.runs.markRunningMany.bind(repo.runs);
  repo.runs.markRunningMany = (...args) => {
    calls.set('markRunningMany', (calls.get('markRunningMany') ?? 0) + 1);
    return markRunningMany(...args);
  };
  const settleSentAndCountMany = h.deps.targets.settleSentAndCountMany.bind(h.deps.targets);
  h.deps.targets.settleSentAndCountMany = (...args) => {
    calls.set('settleSentAndCountMany', (calls.get('settleSentAndCountMany') ?? 0) + 1);
    return settleSentAndCountMany(...args);
  };
  const loadRunMany = repo.runs.loadRunMany.bind(repo.runs);
  repo.runs.loadRunMany = (...args) => {
    calls.set('loadRunMany', (calls.get('loadRunMany') ?? 0) + 1);
    return loadRunMany(...args);
  };
  // how many lanes each claim statement served
  const limits: number[] = [];
  // The first lane's claim is held until the other two have their pace slots (and 1 s more
  // for their instant sleeps: 100 ms was too little once, at load 16): on a loaded machine their
  // reservation could otherwise come back after the first claim had, and each would claim
  // alone. The batching itself is unchanged.
  let pairReserved: () => void = () => undefined;
  const othersAtSlots = new Promise<void>((resolve) => (pairReserved = resolve));
  // the job's claims go through the sender's shared claim statements (statements.ts)
  const claim = h.deps.targets.settleSentAndClaimMany.bind(h.deps.targets);
  h.deps.targets.settleSentAndClaimMany = async (...args) => {
    calls.set('settleSentAndClaimMany', (calls.get('settleSentAndClaimMany') ?? 0) + 1);
    limits.push(...args[0].map((r) => r.limit));
    if (limits.length === 1) await othersAtSlots.then(() => new Promise((r) => setTimeout(r, 1_000)));
    return claim(...args);
  };
  h.deps.targets = counted(h.deps.targets, calls);
  h.deps.cooling = counted(h.deps.cooling, calls);
  // how many lanes each pace reservation served (one Redis call each)
  const reservations: number[] = [];
  const reserveMany = h.deps.pace.reserveMany.bind(h.deps.pace);
  h.deps.pace.reserveMany = async (...args) => {
    reservations.push(args[6]);
    const reserved = await reserveMany(...args);
    if (args[6] === 2) pairReserved();
    return reserved;
  };
  // the first lane's answer waits for the job's last write however slow the machine (the hold
  // itself is the next test's subject): at 100 ms, a loaded CI wrote it alone once
  h.deps.settings.answerHoldMs = 60_000;
  expect(await h.runJob(runId)).toBe('sent');
  expect((await h.run(runId)).status).toBe('success');
  expect((await h.targets(runId)).map((t) => t.status)).toEqual(['sent', 'sent', 'sent']);
  // the new account's health (three deliveries) and the run's finish ride on the last write: no
  // recordHealth, no finish of their own
  expect(limits).toEqual([1, 2]);
  expect(Object.fromEntries(calls)).toEqual({ loadRunMany: 1, markRunningMany: 1, settleSentAndClaimMany: 2, settleSentAndCountMany: 1 });
  const account = await h.tdb.db.selectFrom('accounts').select(['send_outcomes']).where('id', '=', accountId).executeTakeFirstOrThrow();
  expect(account.send_outcomes).toBe('sss');
  // the first lane reserves alone; the two that asked while its call was out, together
  expect(reservations).toEqual([1, 2]);
});

// An answer that no claim comes to carry within 100 ms (JobWrites in writes.ts) is written in the
// sender's claim statement as a claim of no target, never in a statement of its own.
test("a job's answer held past its hold goes in the sender's claim statement, claiming nothing", async () => {
  const { tenantId, accountId } = await h.seedAccount({ groupConcurrency: 1, maxSendPerMinute: 600 });
  const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b'], parts: [{ type: 'text', text: 'hi' }] });
  const calls = new Map<string, number>();
  // the limit of each job in each claim statement, and the answers each carried
  const statements: { limit: number; sent: string[] }[][] = [];
  const claim = h.deps.targets.settleSentAndClaimMany.bind(h.deps.targets);
  // (the sender's shared claim statements hold the repository itself: counted here, not by the proxy)
  h.deps.targets.settleSentAndClaimMany = async (...args) => {
    calls.set('settleSentAndClaimMany', (calls.get('settleSentAndClaimMany') ?? 0) + 1);
    statements.push(args[0].map((r) => ({ limit: r.limit, sent: r.sent.map((s) => s.chatId) })));
    return claim(...args);
  };
  const settleSentAndCountMany = h.deps.targets.settleSentAndCountMany.bind(h.deps.targets);
  h.deps.targets.settleSentAndCountMany = (...args) => {
    calls.set('settleSentAndCountMany', (calls.get('settleSentAndCountMany') ?? 0) + 1);
    return settleSentAndCountMany(...args);
  };
  h.deps.targets = counted(h.deps.targets, calls);
  // the lane's second pace slot comes back 300 ms late: a's answer is held past its 100 ms
  let reservations = 0;
  const reserveMany = h.deps.pace.reserveMany.bind(h.deps.pace);
  h.deps.pace.reserveMany = async (...args) => {
    if (++reservations === 2) await new Promise((r) => setTimeout(r, 300));
    return reserveMany(...args);
  };
  expect(await h.runJob(runId)).toBe('sent');
  expect((await h.targets(runId)).map((t) => [t.chat_id, t.status])).toEqual([
    ['a', 'sent'],
    ['b', 'sent'],
  ]);
  // a's answer went alone, in a statement that claimed nothing; b's with the job's last write
  expect(statements).toEqual([[{ limit: 1, sent: [] }], [{ limit: 0, sent: ['a'] }], [{ limit: 1, sent: [] }]]);
  expect(Object.fromEntries(calls)).toEqual({ settleSentAndClaimMany: 3, settleSentAndCountMany: 1 });
});
