import { ScheduleRepository } from '@metronome/db';
import { runJobId } from '@metronome/queue';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// The hand-over of a run to its next job: one statement moves job_seq and derives job_id from
// (id, job_seq) in SQL. The queue adds the job under runJobId(runId, seq): both must be the
// same string, or the job would find the run naming another job and stop (`stale-message`).

let h: SenderHarness;
beforeEach(async () => {
  h = await startSenderHarness({});
});
afterEach(async () => {
  await h.close();
});

async function step(runId: string): Promise<{ job_seq: number; job_id: string | null }> {
  return h.tdb.db.selectFrom('runs').select(['job_seq', 'job_id']).where('id', '=', runId).executeTakeFirstOrThrow();
}

async function seed(): Promise<string> {
  const { tenantId, accountId } = await h.seedAccount();
  return h.seedRun({ tenantId, accountId, targets: ['a'], parts: [{ type: 'text', text: 'hi' }] });
}

test('each hand-over moves the run one job step on, under the job id the queue uses', async () => {
  const runId = await seed();
  expect(await step(runId)).toEqual({ job_seq: 0, job_id: runJobId(runId, 0) });
  for (const seq of [1, 2, 3, 10, 11]) {
    if (seq === 10)
      await h.tdb.db
        .updateTable('runs')
        .set({ job_seq: 9, job_id: runJobId(runId, 9) })
        .where('id', '=', runId)
        .execute();
    const next = await h.deps.repo.runs.handOver(runId, seq - 1, new Date(h.clock.now()));
    expect(next).toEqual({ jobSeq: seq, jobId: runJobId(runId, seq) });
    expect(await step(runId)).toEqual({ job_seq: seq, job_id: runJobId(runId, seq) });
  }
});

test('of two hand-overs from the same step only the first moves the run', async () => {
  const runId = await seed();
  const now = new Date(h.clock.now());
  expect(await h.deps.repo.runs.handOver(runId, 0, now)).toEqual({ jobSeq: 1, jobId: runJobId(runId, 1) });
  expect(await h.deps.repo.runs.handOver(runId, 0, now)).toBeNull();
  expect(await step(runId)).toEqual({ job_seq: 1, job_id: runJobId(runId, 1) });
});

test("the reconciler's hand-over of lost jobs: open runs still at the step found, under the queue's job id", async () => {
  const runId = await seed();
  const other = await seed();
  const paused = await seed();
  await h.tdb.db.updateTable('runs').set({ status: 'paused', paused_reason: 'operator' }).where('id', '=', paused).execute();
  await h.deps.repo.runs.handOver(other, 0, new Date(h.clock.now()));
  const repo = new ScheduleRepository(h.tdb.db);
  const lost = [runId, other, paused].map((id) => ({ runId: id, fromJobSeq: 0 }));
  // `other` moved on since it was found (its own job carries it), `paused` is not open
  expect(await repo.handOverLostJobs(lost, new Date(h.clock.now()))).toEqual([{ runId, jobSeq: 1 }]);
  expect(await step(runId)).toEqual({ job_seq: 1, job_id: runJobId(runId, 1) });
  expect(await step(other)).toEqual({ job_seq: 1, job_id: runJobId(other, 1) });
  expect(await step(paused)).toEqual({ job_seq: 0, job_id: runJobId(paused, 0) });
});
