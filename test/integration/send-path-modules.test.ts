import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

const SENDER = path.resolve('services/sender/src') + path.sep;

test('probe', async () => {
  const h: SenderHarness = await startSenderHarness({ sendsPerJob: 4 });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  try {
    const { tenantId, accountId } = await h.seedAccount({ groupConcurrency: 1 });
    const warm = await h.seedRun({ tenantId, accountId, targets: ['w'], parts: [{ type: 'text', text: 'x' }] });
    await h.runJob(warm);
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a'], parts: [{ type: 'text', text: 'x' }] });
    await session.post('Profiler.takePreciseCoverage');
    expect(await h.runJob(runId)).toBe('sent');
    const { result } = await session.post('Profiler.takePreciseCoverage');
    const ran = result
      .filter((s) => s.url.includes('services/sender/src'))
      .filter((s) => s.functions.some((f, i) => i > 0 && f.ranges[0]!.count > 0))
      .map((s) => s.url);
    console.log(ran, result.filter((s) => s.url.includes('sender')).map((s) => s.url));
  } finally {
    await session.post('Profiler.stopPreciseCoverage');
    session.disconnect();
    await h.close();
  }
});
