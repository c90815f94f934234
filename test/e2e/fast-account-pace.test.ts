import { paceBreaches, received, repeats, startFanOut } from '../helpers/platform-record.js';
import { runsToEnd, startStack, type Stack } from '../helpers/stack.js';

// Fast accounts, judged at the platform. At 6,000 a minute (one send every 10 ms) a job's pace
// call also reserves the slots due in the next 20 ms, and its lanes take them without a call
// (services/sender/src/job-pace.ts, PaceBatches); a job that ends with some not taken leaves them
// unused. Two senders, ten lanes per account, jobs of 20 sends handed from replica to replica:
// the sandbox must never see an account faster than its pace, nor a chat twice. The pace is
// held twice, by the shared reservations and by each job's own spacing of its writes
// (job-pace.ts, spaceWrite): with both broken (reservations at twice the pace, no spacing) this goes red.
const ACCOUNTS = 2;
const CHATS = 600;
const PER_MINUTE = 6_000;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ senders: 2, sandboxEnv: { SANDBOX_LATENCY_MS: '2' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

test('accounts at 6,000 a minute with slots reserved ahead: never faster than the pace at the platform, nothing twice', async () => {
  const { token, runIds } = await startFanOut(stack, { name: 'fast', accounts: ACCOUNTS, chats: CHATS, perMinute: PER_MINUTE, groupConcurrency: 10 });
  const runs = await runsToEnd(stack, token, runIds, 120_000, 250);
  expect(runs.map((r) => r.status)).toEqual(runIds.map(() => 'success'));

  const items = await received(stack);
  expect(repeats(items)).toEqual([]);
  expect(items).toHaveLength(ACCOUNTS * CHATS);
  expect(paceBreaches(items, PER_MINUTE, 1)).toEqual([]);
}, 180_000);
