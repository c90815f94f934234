import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// Which sender modules really run for one send, measured: V8's precise coverage over one job
// that sends one chat (a text, then a media's first upload), counters reset once the job's
// code is loaded. It counts every module reached, through `deps` as well as through imports,
// so a module added behind `deps` shows here. docs/DEVELOPING.md ("One send") draws the path.
// The subscribers that turn the job's events into metrics and log lines are listed apart:
// they report what a send did and decide nothing in it.

const SENDER = `file://${path.resolve('services/sender/src')}/`;
const REPORTING = ['log-subscriber.ts', 'metrics-subscriber.ts'];
const MAX_SENDER_MODULES = 6;

let h: SenderHarness;
const session = new Session();

beforeAll(async () => {
  h = await startSenderHarness({ sendsPerJob: 4 });
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
});

afterAll(async () => {
  await session.post('Profiler.stopPreciseCoverage');
  session.disconnect();
  await h.close();
});

/** The sender modules any of whose functions ran during `work` (a module's own top level is not counted: it ran at load). */
async function modulesRunBy(work: () => Promise<unknown>): Promise<string[]> {
  await session.post('Profiler.takePreciseCoverage');
  await work();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  return result
    .filter((s) => s.url.startsWith(SENDER) && s.functions.some((f, i) => i > 0 && f.ranges[0]!.count > 0))
    .map((s) => s.url.slice(SENDER.length))
    .sort();
}

/** One run of one chat, sent by one job; a first job of the account loads every module first. */
async function oneSend(parts: Parameters<SenderHarness['seedRun']>[0]['parts'], account: { tenantId: string; accountId: string }): Promise<string[]> {
  const warm = await h.seedRun({ ...account, targets: ['warm'], parts: [{ type: 'text', text: 'warm' }] });
  expect(await h.runJob(warm)).toBe('sent');
  const runId = await h.seedRun({ ...account, targets: ['chat-1'], parts });
  const modules = await modulesRunBy(async () => expect(await h.runJob(runId)).toBe('sent'));
  expect((await h.targets(runId)).map((t) => t.status)).toEqual(['sent']);
  return modules;
}

test('a text send runs the job, its lanes, its pace, its writes and the shared statements: nothing else', async () => {
  const account = await h.seedAccount();
  const modules = await oneSend([{ type: 'text', text: 'hello {{name|there}}' }], account);
  expect(modules.filter((m) => !REPORTING.includes(m))).toEqual(['job-pace.ts', 'run-job.ts', 'send-lanes.ts', 'statements.ts', 'writes.ts']);
  expect(modules.filter((m) => REPORTING.includes(m))).toEqual(REPORTING);
});

test('a media send adds the media references, and stays within the limit', async () => {
  const account = await h.seedAccount();
  const mediaId = await h.seedMedia(account.tenantId, Buffer.from('pretend png bytes'));
  const modules = await oneSend([{ type: 'media', mediaId, caption: 'look' }], account);
  const sending = modules.filter((m) => !REPORTING.includes(m));
  expect(sending).toEqual(['job-pace.ts', 'media-refs.ts', 'run-job.ts', 'send-lanes.ts', 'statements.ts', 'writes.ts']);
  expect(sending.length).toBeLessThanOrEqual(MAX_SENDER_MODULES);
});
