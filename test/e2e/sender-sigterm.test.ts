import { groupAlive, npmRun, type NpmService } from '../helpers/npm-run.js';
import { paceBreaches, received, repeats, senderEnvFor, startFanOut } from '../helpers/platform-record.js';
import { runsToEnd, sandbox, startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// A deploy is a SIGTERM, not a kill: `npm run sender` (what compose runs) is stopped three times
// mid fan-out. Each time node drains: it finishes the sends it has begun, writes them, gives back
// what it held and hands its runs on at once, then exits 0. Nothing is unknown, nothing is sent
// twice, and no account's sends stall waiting for BullMQ to notice a stalled job.

// One job holds its account for all of its chats (SENDS_PER_JOB above them), 200 sends at 600
// a minute: 20 s. The stops come 3, 6 and 9 s into it, each with over 9 s of its jobs left: a
// replica that waited for its jobs to end would overrun its own stop deadline (9 s) and exit 3;
// one that drains hands them on within a send.
const ACCOUNTS = 5;
const CHATS = 200;
const PER_MINUTE = 600;
const senderEnv = { SENDER_CONCURRENCY: '8', SENDS_PER_JOB: '1000' };
const STOPS = 3;
// BullMQ would hand a dead replica's job on after its lock (20 s) and stall check (10 s);
// a drained one hands its runs on at once, so no account waits anywhere near that long.
const LONGEST_GAP_MS = 5_000;

let stack: Stack;
let current: NpmService | undefined;
beforeAll(async () => {
  stack = await startStack({ senders: 1, senderEnv, sandboxEnv: { SANDBOX_LATENCY_MS: '30' } });
}, 60_000);
afterAll(async () => {
  if (current?.npm.pid !== undefined && groupAlive(current.npm.pid)) process.kill(-current.npm.pid, 'SIGKILL');
  await stack?.stop();
}, 60_000);

function npmSender(): NpmService {
  return npmRun('sender', senderEnvFor(stack, senderEnv));
}

test('SIGTERM to `npm run sender` three times mid fan-out: each drains and exits 0; nothing unknown, nothing twice, no stall', async () => {
  current = npmSender();
  await current.waitFor('start-up', (l) => l['msg'] === 'sender ready');
  const { token, runIds } = await startFanOut(stack, { name: 'deploys', accounts: ACCOUNTS, chats: CHATS, perMinute: PER_MINUTE, groupConcurrency: 3 });

  const exits: { code: number | null; signal: NodeJS.Signals | null; ms: number; at: number }[] = [];
  for (let s = 0; s < STOPS; s++) {
    // mid fan-out, with this replica holding jobs
    await eventually(
      'this replica to be sending',
      async () => current!.lines.some((l) => l['msg'] === 'sender ready') && ((await sandbox(stack, '/sandbox/stats')).accepted as number) > (s + 1) * 150,
      60_000,
      50,
    );
    const signalledAt = Date.now();
    process.kill(current.npm.pid!, 'SIGTERM');
    const exit = await current.exited;
    exits.push({ ...exit, ms: Date.now() - signalledAt, at: signalledAt });
    expect(current.lines.some((l) => l['msg'] === 'sender stopped')).toBe(true);
    current = npmSender();
    await current.waitFor('start-up', (l) => l['msg'] === 'sender ready');
  }
  for (const e of exits) {
    expect({ code: e.code, signal: e.signal }).toEqual({ code: 0, signal: null });
    expect(e.ms).toBeLessThan(30_000);
  }

  const runs = await runsToEnd(stack, token, runIds, 120_000, 500);
  expect(runs.map((r) => r.status)).toEqual(runIds.map(() => 'success'));
  const notSent = await stack.db.db.selectFrom('run_targets').select(['chat_id', 'status']).where('status', '<>', 'sent').execute();
  expect(notSent).toEqual([]);

  const items = await received(stack);
  expect(repeats(items)).toEqual([]);
  expect(items).toHaveLength(ACCOUNTS * CHATS);
  // Never too fast, over 1 s and 10 s windows, through the restarts. (Each account once showed
  // 12-13 sends in one second here: lanes that a stall had put behind slept the same wait in
  // spaceWrite and wrote in pairs, two intervals apart; gate.test.ts holds that fixed.)
  // A breach says when its window began against the signals.
  expect(paceBreaches(items, PER_MINUTE, 1).map((b) => ({ ...b, signals: exits.map((e) => b.from - e.at) }))).toEqual([]);
  // no account stalled: its runs moved on at once from each stopped replica
  const gaps = new Map<string, number>();
  const byAccount = new Map<string, number[]>();
  for (const m of items) byAccount.set(m.account, [...(byAccount.get(m.account) ?? []), m.receivedAt]);
  for (const [account, times] of byAccount) {
    times.sort((a, b) => a - b);
    gaps.set(account, Math.max(...times.slice(1).map((t, i) => t - times[i]!)));
  }
  expect([...gaps].filter(([, gap]) => gap > LONGEST_GAP_MS)).toEqual([]);
}, 240_000);
