import { runJobId } from '@metronome/queue';
import { apiForFile, call, createCampaign, NOW, seedRun, tenantForFile } from './harness.js';

// A campaign's manual run (POST /v1/campaigns/{id}/runs) and its next run after an edit.

const api = apiForFile('api_campaign_runs');
const a = tenantForFile(api, 'A');

describe('POST /v1/campaigns/{id}/runs', () => {
  test('creates a manual run with its targets and its BullMQ job; a second one is 409', async () => {
    const { id } = await createCampaign(api, a, { targets: ['g1', 'g2', 'g3', 'g4'] });
    const now = api.clock.now();
    const res = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      campaignId: id,
      trigger: 'manual',
      status: 'queued',
      scheduledAt: new Date(now).toISOString(),
      // the 06:00–18:00 window in Kuala Lumpur closes at 10:00 UTC
      windowEndAt: '2030-01-16T10:00:00.000Z',
      counts: { total: 4, pending: 4, inFlight: 0, sent: 0, failed: 0, skipped: 0, unknown: 0 },
      pausedReason: null,
    });
    const job = await api.queue.queue.getJob(runJobId(res.body.id, 0));
    expect(job?.data).toEqual({ runId: res.body.id });
    const row = await api.db.selectFrom('runs').select(['job_id', 'parts']).where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ job_id: runJobId(res.body.id, 0), parts: [{ type: 'text', text: 'Hello' }] });
    expect((await call(api, 'GET', `/v1/campaigns/${id}`, a.token)).body.lastRunId).toBe(res.body.id);

    const again = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
  });

  test('outside the window the run is scheduled at the next opening and its job delayed until then', async () => {
    const { id } = await createCampaign(api, a, { deliveryWindow: { start: '20:00', end: '22:00' } });
    const now = api.clock.now();
    const res = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token);
    expect(res.body.scheduledAt).toBe('2030-01-16T12:00:00.000Z');
    expect(res.body.windowEndAt).toBe('2030-01-16T14:00:00.000Z');
    const job = await api.queue.queue.getJob(runJobId(res.body.id, 0));
    expect(job?.opts.delay).toBe(Date.parse('2030-01-16T12:00:00Z') - now);
  });

  test('answers the run explained as GET /v1/runs/{id} does: chats delivered within the interval hold it (interval_gate)', async () => {
    api.clock.set(NOW); // 11:00 in Kuala Lumpur (earlier tests move the clock)
    const { id } = await createCampaign(api, a, { schedule: { type: 'interval', everySeconds: 300 }, targets: ['h1', 'h2', 'h3'] });
    const earlier = await seedRun(api, id, 'success', { h1: 'sent', h2: 'sent', h3: 'sent' });
    // delivered a minute ago: each chat is free again 5 minutes after, at 11:04 in Kuala Lumpur
    await api.db
      .updateTable('run_targets')
      .set({ sent_at: new Date(NOW - 60_000) })
      .where('run_id', '=', earlier.id)
      .execute();
    await api.db
      .updateTable('runs')
      .set({ finished_at: new Date(NOW - 30_000) })
      .where('id', '=', earlier.id)
      .execute();
    const res = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token);
    expect(res.status).toBe(201);
    expect(res.body.waiting).toEqual({
      reason: 'interval_gate',
      until: new Date(NOW + 240_000).toISOString(),
      detail: '3 chats held until 11:04 by the 5-minute interval since their last delivery.',
    });
    expect(res.body.eta).toBe(new Date(NOW + 240_000).toISOString());
    const read = await call(api, 'GET', `/v1/runs/${res.body.id}`, a.token);
    expect(res.body).toEqual(read.body);
  });

  test('a run due now answers why it waits and when it should finish', async () => {
    api.clock.set(NOW);
    const { id } = await createCampaign(api, a, { targets: ['q1', 'q2'] });
    const res = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token);
    expect(res.status).toBe(201);
    expect(res.body.waiting).toMatchObject({ reason: 'queue', until: null });
    // two chats at 40/min reserved 2 % slower: the second one slot (1530 ms) after the first
    expect(res.body.eta).toBe(new Date(NOW + 1530).toISOString());
  });

  test('a paused run does not block a manual run (only queued or running do)', async () => {
    const { id } = await createCampaign(api, a);
    await seedRun(api, id, 'paused', { x: 'pending' });
    expect((await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token)).status).toBe(201);
  });
});

describe('never early after an edit', () => {
  test('changing the interval of a campaign that just ran keeps it from coming due before its interval', async () => {
    const created = await createCampaign(api, a, { schedule: { type: 'interval', everySeconds: 600 } });
    // the scheduler ran it a minute ago
    await seedRun(api, created.id, 'success', { x: 'sent' }, { scheduledAt: new Date(NOW - 60_000) });
    const patched = await call(api, 'PATCH', `/v1/campaigns/${created.id}`, a.token, { schedule: { type: 'interval', everySeconds: 300 } });
    expect(patched.status).toBe(200);
    expect(patched.body.nextRunAt).toBe(new Date(NOW - 60_000 + 300_000).toISOString());
  });
});
