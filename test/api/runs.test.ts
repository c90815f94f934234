import { runJobId } from '@metronome/queue';
import { sql } from 'kysely';
import { ADMIN_TOKEN, apiForFile, call, createCampaign, createTenant, seedRun, tenantForFile } from './harness.js';

// Runs: reads with cursors, and the operator's transitions on rows put in the database as the
// scheduler and senders would have left them.

const api = apiForFile('api_runs');
const a = tenantForFile(api, 'A');
const b = tenantForFile(api, 'B');

async function runRow(id: string) {
  return api.db.selectFrom('runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}
async function targetsOf(id: string) {
  return api.db
    .selectFrom('run_targets')
    .select(['chat_id', 'status', 'attempts', 'error_code', 'error_message'])
    .where('run_id', '=', id)
    .orderBy('chat_id')
    .execute();
}
const post = (path: string, token: string) => call(api, 'POST', path, token);

describe('reads', () => {
  test('GET /v1/runs pages newest first and filters by status and campaign', async () => {
    const t = await createTenant(api, 'lister');
    const c1 = await createCampaign(api, t);
    const c2 = await createCampaign(api, t);
    const base = Date.parse('2030-01-10T00:00:00Z');
    // Runs 1 and 2 are created in the same millisecond; pages of one must still show each once.
    const seeded = [
      await seedRun(api, c1.id, 'success', { a: 'sent' }, { createdAt: new Date(base) }),
      await seedRun(api, c1.id, 'failed', { a: 'failed' }, { createdAt: new Date(base + 1000) }),
      await seedRun(api, c2.id, 'success', { a: 'sent' }, { createdAt: new Date(base + 1000) }),
      await seedRun(api, c2.id, 'paused', { a: 'sent', b: 'pending' }, { createdAt: new Date(base + 2000) }),
      // the same instant as the first, to the microsecond: the id breaks the tie
      await seedRun(api, c2.id, 'cancelled', { a: 'skipped' }, { createdAt: new Date(base) }),
    ];
    // And two apart by half a millisecond: equal as JS Dates, so the cursor must keep microseconds.
    await sql`update runs set created_at = created_at + interval '500 microseconds' where id = ${seeded[1]!.id}`.execute(api.db);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await call(api, 'GET', `/v1/runs?limit=1${cursor ? `&cursor=${cursor}` : ''}`, t.token);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((r: { id: string }) => r.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    const tied = [seeded[0]!.id, seeded[4]!.id].sort().reverse();
    expect(seen).toEqual([seeded[3]!.id, seeded[1]!.id, seeded[2]!.id, ...tied]);

    const succeeded = await call(api, 'GET', '/v1/runs?status=success', t.token);
    expect(succeeded.body.items.map((r: { id: string }) => r.id).sort()).toEqual([seeded[0]!.id, seeded[2]!.id].sort());
    const ofC1 = await call(api, 'GET', `/v1/runs?campaignId=${c1.id}&status=failed`, t.token);
    expect(ofC1.body.items.map((r: { id: string }) => r.id)).toEqual([seeded[1]!.id]);
    expect((await call(api, 'GET', '/v1/runs?status=bogus', t.token)).body.error.details[0].field).toBe('status');
    expect((await call(api, 'GET', `/v1/runs?campaignId=${c1.id}`, b.token)).body.items).toEqual([]);
  });

  test('GET /v1/runs/{id} has the contract shape with counts from its targets', async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, 'paused', { a: 'sent', b: 'sent', c: 'pending', d: 'failed', e: 'unknown', f: 'skipped', g: 'in_flight' });
    const res = await call(api, 'GET', `/v1/runs/${run.id}`, a.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: run.id,
      tenantId: a.id,
      campaignId,
      accountId: expect.any(String),
      trigger: 'schedule',
      status: 'paused',
      scheduledAt: expect.any(String),
      startedAt: expect.any(String),
      finishedAt: null,
      windowEndAt: expect.any(String),
      counts: { total: 7, pending: 1, inFlight: 1, sent: 2, failed: 1, skipped: 1, unknown: 1, delivered: 0, read: 0, replied: 0 },
      pausedReason: 'window_closed',
      errorSummary: expect.stringContaining('Delivery window closed'),
      ignoredInterval: false,
      historyPurgedAt: null,
      createdAt: expect.any(String),
      waiting: { reason: 'window_closed', until: null, detail: expect.stringContaining('resume it to continue') },
      eta: null,
    });
  });

  test('GET /v1/runs/{id}/targets filters by status and pages by chat id', async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, 'partial', { c: 'sent', a: 'failed', b: 'sent', d: 'sent' });
    const failed = await call(api, 'GET', `/v1/runs/${run.id}/targets?status=failed`, a.token);
    expect(failed.body).toEqual({
      items: [
        {
          chatId: 'a',
          title: null,
          threadId: null,
          status: 'failed',
          attempts: 3,
          nextAttemptAt: null,
          sentAt: null,
          error: { code: 'chat_not_found', message: 'no such chat' },
          settledBy: null,
          deliveredAt: null,
          readAt: null,
          repliedAt: null,
          deliveredTo: null,
          readBy: null,
          memberCount: null,
          waiting: null,
        },
      ],
      nextCursor: null,
    });
    const first = await call(api, 'GET', `/v1/runs/${run.id}/targets?status=sent&limit=2`, a.token);
    expect(first.body.items.map((t: { chatId: string }) => t.chatId)).toEqual(['b', 'c']);
    expect(first.body.items[0].sentAt).toEqual(expect.any(String));
    const second = await call(api, 'GET', `/v1/runs/${run.id}/targets?status=sent&limit=2&cursor=${first.body.nextCursor}`, a.token);
    expect(second.body).toEqual({ items: [expect.objectContaining({ chatId: 'd' })], nextCursor: null });
    // receipts filters (none told yet): not delivered is every target; a bad flag names the field
    expect((await call(api, 'GET', `/v1/runs/${run.id}/targets?delivered=false`, a.token)).body.items).toHaveLength(4);
    expect((await call(api, 'GET', `/v1/runs/${run.id}/targets?read=true`, a.token)).body.items).toHaveLength(0);
    const bad = await call(api, 'GET', `/v1/runs/${run.id}/targets?replied=yes`, a.token);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('replied');
  });

  test("another tenant's run answers 404 on every route, like a missing one", async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, 'paused', { a: 'pending' });
    const missing = await call(api, 'GET', '/v1/runs/00000000-0000-4000-8000-000000000000', b.token);
    const foreign = await call(api, 'GET', `/v1/runs/${run.id}`, b.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await call(api, 'GET', `/v1/runs/${run.id}/targets`, b.token)).status).toBe(404);
    for (const action of ['pause', 'resume', 'cancel', 'retry-failed']) expect((await post(`/v1/runs/${run.id}/${action}`, b.token)).status).toBe(404);
    expect((await runRow(run.id)).status).toBe('paused');
    expect((await call(api, 'GET', '/v1/runs', b.token)).body.items).toEqual([]);
    expect((await call(api, 'GET', `/v1/runs/${run.id}`, ADMIN_TOKEN)).status).toBe(200);
  });
});

describe('pause', () => {
  test.each(['queued', 'running'] as const)('%s → paused (operator); a second pause is 409', async (status) => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, status, { a: 'pending', b: 'sent' });
    const res = await post(`/v1/runs/${run.id}/pause`, a.token);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'paused', pausedReason: 'operator', counts: { pending: 1, sent: 1 } });
    const again = await post(`/v1/runs/${run.id}/pause`, a.token);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: { code: 'conflict', message: expect.stringContaining('paused'), details: [] } });
  });

  test('of two concurrent pauses exactly one wins', async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, 'running', { a: 'pending' });
    const results = await Promise.all([post(`/v1/runs/${run.id}/pause`, a.token), post(`/v1/runs/${run.id}/pause`, a.token)]);
    expect(results.map((r) => r.status).sort()).toEqual([202, 409]);
  });

  test.each(['paused', 'success', 'cancelled'] as const)('from %s → 409', async (status) => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, status, { a: status === 'paused' ? 'pending' : 'sent' });
    expect((await post(`/v1/runs/${run.id}/pause`, a.token)).status).toBe(409);
    expect((await runRow(run.id)).status).toBe(status);
  });
});

describe('resume', () => {
  test("paused → queued with the next job step, the campaign's current window, and its job enqueued", async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, 'paused', { a: 'sent', b: 'pending', c: 'failed' }, { jobSeq: 4 });
    // Widen the window before resuming: the run gets the new closing time.
    await call(api, 'PATCH', `/v1/campaigns/${campaignId}`, a.token, { deliveryWindow: { start: '06:00', end: '23:00' } });
    const res = await post(`/v1/runs/${run.id}/resume`, a.token);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'queued',
      pausedReason: null,
      errorSummary: null,
      windowEndAt: '2030-01-16T15:00:00.000Z',
      counts: { total: 3, pending: 1, sent: 1, failed: 1 },
    });
    const row = await runRow(run.id);
    expect({ seq: row.job_seq, job: row.job_id }).toEqual({ seq: 5, job: runJobId(run.id, 5) });
    const job = await api.queue.queue.getJob(runJobId(run.id, 5));
    expect(job?.data).toEqual({ runId: run.id });
    expect(job?.opts.delay ?? 0).toBe(0);
    // sent and failed targets stay as they were
    expect((await targetsOf(run.id)).map((t) => t.status)).toEqual(['sent', 'pending', 'failed']);
  });

  test('outside the window it is queued for the next opening', async () => {
    const { id: campaignId } = await createCampaign(api, a, { deliveryWindow: { start: '20:00', end: '22:00' } });
    const run = await seedRun(api, campaignId, 'paused', { a: 'pending' });
    const now = api.clock.now();
    const res = await post(`/v1/runs/${run.id}/resume`, a.token);
    expect(res.body.windowEndAt).toBe('2030-01-16T14:00:00.000Z');
    const job = await api.queue.queue.getJob(runJobId(run.id, 1));
    expect(job?.opts.delay).toBe(Date.parse('2030-01-16T12:00:00Z') - now);
  });

  test.each(['queued', 'running', 'success', 'failed', 'cancelled'] as const)('from %s → 409', async (status) => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, status, { a: 'pending' });
    const res = await post(`/v1/runs/${run.id}/resume`, a.token);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect((await runRow(run.id)).job_seq).toBe(0);
  });

  test('409 while the campaign has another queued or running run; the run stays paused', async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const paused = await seedRun(api, campaignId, 'paused', { a: 'pending' });
    await seedRun(api, campaignId, 'running', { a: 'pending' });
    const res = await post(`/v1/runs/${paused.id}/resume`, a.token);
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain('another queued or running run');
    expect((await runRow(paused.id)).status).toBe('paused');
    expect(await api.queue.queue.getJob(runJobId(paused.id, 1))).toBeUndefined();
  });
});

describe('cancel', () => {
  test.each(['queued', 'running', 'paused'] as const)('%s → cancelled; pending targets skipped, the rest kept', async (status) => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, status, { a: 'sent', b: 'pending', c: 'failed', d: 'pending' });
    const res = await post(`/v1/runs/${run.id}/cancel`, a.token);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'cancelled',
      finishedAt: new Date(api.clock.now()).toISOString(),
      counts: { sent: 1, failed: 1, skipped: 2, pending: 0 },
    });
    const targets = await targetsOf(run.id);
    expect(targets.map((t) => [t.chat_id, t.status, t.error_code])).toEqual([
      ['a', 'sent', null],
      ['b', 'skipped', 'cancelled'],
      ['c', 'failed', 'chat_not_found'],
      ['d', 'skipped', 'cancelled'],
    ]);
    expect((await post(`/v1/runs/${run.id}/cancel`, a.token)).status).toBe(409);
  });

  test.each(['success', 'partial', 'failed'] as const)('a finished (%s) run cannot be cancelled', async (status) => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, status, { a: 'sent' });
    expect((await post(`/v1/runs/${run.id}/cancel`, a.token)).status).toBe(409);
    expect((await runRow(run.id)).status).toBe(status);
  });
});

describe('retry-failed', () => {
  test('failed and unknown targets go back to pending with attempts and errors cleared; the run is queued with a job', async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, 'partial', { a: 'sent', b: 'failed', c: 'unknown', d: 'skipped' }, { jobSeq: 2 });
    const res = await post(`/v1/runs/${run.id}/retry-failed`, a.token);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'queued', finishedAt: null, counts: { total: 4, sent: 1, pending: 2, failed: 0, unknown: 0, skipped: 1 } });
    expect(await targetsOf(run.id)).toEqual([
      { chat_id: 'a', status: 'sent', attempts: 3, error_code: null, error_message: null },
      { chat_id: 'b', status: 'pending', attempts: 0, error_code: null, error_message: null },
      { chat_id: 'c', status: 'pending', attempts: 0, error_code: null, error_message: null },
      { chat_id: 'd', status: 'skipped', attempts: 3, error_code: null, error_message: null },
    ]);
    const row = await runRow(run.id);
    expect({ seq: row.job_seq, job: row.job_id }).toEqual({ seq: 3, job: runJobId(run.id, 3) });
    expect((await api.queue.queue.getJob(runJobId(run.id, 3)))?.data).toEqual({ runId: run.id });
    // queued again: a second retry is refused
    expect((await post(`/v1/runs/${run.id}/retry-failed`, a.token)).status).toBe(409);
  });

  test('a cancelled run can be retried too', async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, 'cancelled', { a: 'failed', b: 'skipped' });
    expect((await post(`/v1/runs/${run.id}/retry-failed`, a.token)).status).toBe(202);
  });

  test.each(['queued', 'running', 'paused'] as const)('from %s (not finished) → 409', async (status) => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, status, { a: 'failed', b: 'pending' });
    const res = await post(`/v1/runs/${run.id}/retry-failed`, a.token);
    expect(res.status).toBe(409);
    expect((await targetsOf(run.id))[0]?.status).toBe('failed');
  });

  test('409 when nothing failed', async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const run = await seedRun(api, campaignId, 'success', { a: 'sent', b: 'sent' });
    const res = await post(`/v1/runs/${run.id}/retry-failed`, a.token);
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain('no failed or unknown targets');
  });

  test('409 while the campaign has another open run; nothing changes', async () => {
    const { id: campaignId } = await createCampaign(api, a);
    const failed = await seedRun(api, campaignId, 'failed', { a: 'failed' });
    await seedRun(api, campaignId, 'queued', { a: 'pending' });
    expect((await post(`/v1/runs/${failed.id}/retry-failed`, a.token)).status).toBe(409);
    expect((await runRow(failed.id)).status).toBe('failed');
    expect((await targetsOf(failed.id))[0]?.status).toBe('failed');
  });
});
