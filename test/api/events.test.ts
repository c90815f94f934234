import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { RUN_EVENTS_POLL_MS } from '../../services/control-api/src/events/run-event-hub.js';
import { openEventStream, type EventStream } from '../helpers/sse-client.js';
import { eventually } from '../helpers/test-env.js';
import { ADMIN_TOKEN, call, createCampaign, createTenant, seedRun, startApi, type Api, type Tenant } from './harness.js';

// GET /v1/events over a real listening server: status changes made by anyone (here: plain
// SQL, as a sender would) arrive from run_events, in id order, filtered to the caller's tenant.

let api: Api;
let base: string;
let a: Tenant;
let b: Tenant;
const streams: EventStream[] = [];

beforeAll(async () => {
  api = await startApi('api_events');
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  a = await createTenant(api, 'A');
  b = await createTenant(api, 'B');
}, 30_000);
afterAll(async () => {
  for (const s of streams) s.close();
  await api.close();
});

/** Opens /v1/events (on `url`, this file's server unless told) and keeps the stream to close it after the tests. */
async function openStream(token: string | null, lastEventId?: number, url = base): Promise<EventStream> {
  const stream = await openEventStream(url, token, lastEventId);
  streams.push(stream);
  return stream;
}

async function setStatus(runId: string, status: string): Promise<void> {
  await api.db
    .updateTable('runs')
    .set({ status: status as 'running' })
    .where('id', '=', runId)
    .execute();
}

test('without a token the stream is refused with 401', async () => {
  const s = await openStream(null);
  expect(s.status).toBe(401);
});

test("a run's status change arrives as a `run` event with counts and notification texts", async () => {
  const stream = await openStream(a.token);
  expect(stream.status).toBe(200);
  const { id: campaignId } = await createCampaign(api, a, { name: 'Standup' });
  const run = await seedRun(api, campaignId, 'running', { x: 'sent', y: 'pending', z: 'sent' });
  await setStatus(run.id, 'paused');
  const event = await eventually('the paused event', async () => stream.events.find((e) => e.data.runId === run.id && e.data.status === 'paused'), 10_000, 20);
  expect(event.event).toBe('run');
  expect(event.id).toMatch(/^\d+$/);
  expect(event.data).toEqual({
    runId: run.id,
    campaignId,
    status: 'paused',
    counts: { total: 3, pending: 1, inFlight: 0, sent: 2, failed: 0, skipped: 0, unknown: 0, delivered: 0, read: 0, replied: 0 },
    title: 'Reminder paused',
    body: '2 of 3 groups delivered. Resume from the Activity tab.',
  });
  // the insert was an event too, and it came first
  const ofRun = stream.events.filter((e) => e.data.runId === run.id).map((e) => e.data.status);
  expect(ofRun).toEqual(['running', 'paused']);
});

test("a tenant sees only its own runs' events; the admin sees all", async () => {
  const streamB = await openStream(b.token);
  const admin = await openStream(ADMIN_TOKEN);
  const runA = await seedRun(api, (await createCampaign(api, a)).id, 'running', { x: 'pending' });
  await setStatus(runA.id, 'success');
  const runB = await seedRun(api, (await createCampaign(api, b)).id, 'running', { x: 'pending' });
  await setStatus(runB.id, 'failed');
  // Events are delivered in order, so once B's own event is in, A's would have been before it.
  await eventually('B to get its own event', async () => streamB.events.some((e) => e.data.runId === runB.id && e.data.status === 'failed'), 10_000, 20);
  expect(streamB.events.filter((e) => e.data.runId === runA.id)).toEqual([]);
  await eventually(
    'the admin to see both',
    async () => {
      const ids = new Set(admin.events.map((e) => e.data.runId));
      return ids.has(runA.id) && ids.has(runB.id);
    },
    10_000,
    20,
  );
});

test('Last-Event-ID replays what was missed, then continues live', async () => {
  const { id: campaignId } = await createCampaign(api, a);
  const first = await openStream(a.token);
  const run = await seedRun(api, campaignId, 'running', { x: 'pending' });
  const seen = await eventually('the running event', async () => first.events.find((e) => e.data.runId === run.id), 10_000, 20);
  first.close();

  // While disconnected: two changes.
  await setStatus(run.id, 'paused');
  await setStatus(run.id, 'cancelled');
  const again = await openStream(a.token, Number(seen.id));
  await eventually('the replay', async () => again.events.filter((e) => e.data.runId === run.id).length >= 2, 10_000, 20);
  expect(again.events.filter((e) => e.data.runId === run.id).map((e) => e.data.status)).toEqual(['paused', 'cancelled']);
  const replayedIds = again.events.map((e) => Number(e.id));
  expect(replayedIds.every((id) => id > Number(seen.id))).toBe(true);

  const next = await seedRun(api, campaignId, 'queued', { x: 'pending' });
  await eventually('live events after the replay', async () => again.events.some((e) => e.data.runId === next.id), 10_000, 20);
});

test('a run changed by the API itself is announced too', async () => {
  const stream = await openStream(a.token);
  const { id: campaignId } = await createCampaign(api, a);
  const created = await call(api, 'POST', `/v1/campaigns/${campaignId}/runs`, a.token);
  await call(api, 'POST', `/v1/runs/${created.body.id}/cancel`, a.token);
  await eventually(
    'queued then cancelled',
    async () => {
      const statuses = stream.events.filter((e) => e.data.runId === created.body.id).map((e) => e.data.status);
      return statuses.join() === 'queued,cancelled';
    },
    10_000,
    20,
  );
});

test('after the notification connection (account and directory events) is lost, no run event is lost: they are read from run_events', async () => {
  const stream = await openStream(a.token);
  const { id: campaignId } = await createCampaign(api, a);
  const before = await seedRun(api, campaignId, 'running', { x: 'pending' });
  await eventually('an event before the loss', async () => stream.events.some((e) => e.data.runId === before.id), 10_000, 20);
  const killed = await sql<{ n: number }>`
    select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
    where application_name = 'metronome-api-events' and datname = current_database()`.execute(api.db);
  expect(killed.rows[0]?.n).toBe(1);
  // Changed while the notification connection is down
  await setStatus(before.id, 'paused');
  await eventually('the change', async () => stream.events.some((e) => e.data.runId === before.id && e.data.status === 'paused'), 15_000, 50);
  const after = await seedRun(api, (await createCampaign(api, a)).id, 'queued', { x: 'pending' });
  await eventually('live events again', async () => stream.events.some((e) => e.data.runId === after.id), 15_000, 50);
}, 30_000);

test('a change whose transaction is still open holds the later ones back: the stream keeps id order', async () => {
  const stream = await openStream(a.token);
  const first = await seedRun(api, (await createCampaign(api, a)).id, 'queued', { x: 'pending' });
  const second = await seedRun(api, (await createCampaign(api, a)).id, 'queued', { x: 'pending' });
  await eventually('both runs announced', async () => [first.id, second.id].every((id) => stream.events.some((e) => e.data.runId === id)), 10_000, 20);
  const slow = await api.db.connection().execute(async (conn) => {
    await sql`begin`.execute(conn);
    // takes the lower event id, committed last
    await sql`update runs set status = 'running' where id = ${first.id}::uuid`.execute(conn);
    await setStatus(second.id, 'running');
    const seen = (id: string) => stream.events.some((e) => e.data.runId === id && e.data.status === 'running');
    // the committed, higher id is read (and held) meanwhile: four reads of the hub
    await new Promise((r) => setTimeout(r, 4 * RUN_EVENTS_POLL_MS));
    const heldBack = !seen(second.id);
    await sql`commit`.execute(conn);
    return { heldBack, seen };
  });
  expect(slow.heldBack).toBe(true);
  await eventually('both changes', async () => slow.seen(first.id) && slow.seen(second.id), 10_000, 20);
  const running = stream.events.filter((e) => e.data.status === 'running' && [first.id, second.id].includes(String(e.data.runId)));
  expect(running.map((e) => e.data.runId)).toEqual([first.id, second.id]);
  expect(running.map((e) => Number(e.id))).toEqual([...running.map((e) => Number(e.id))].sort((x, y) => x - y));
}, 20_000);

test('a change rolled back leaves a gap that holds nothing back for long', async () => {
  const stream = await openStream(a.token);
  const run = await seedRun(api, (await createCampaign(api, a)).id, 'queued', { x: 'pending' });
  await api.db.connection().execute(async (conn) => {
    await sql`begin`.execute(conn);
    await sql`update runs set status = 'paused' where id = ${run.id}::uuid`.execute(conn);
    await sql`rollback`.execute(conn);
  });
  await setStatus(run.id, 'running');
  await eventually('the change after the gap', async () => stream.events.some((e) => e.data.runId === run.id && e.data.status === 'running'), 10_000, 50);
  expect(stream.events.some((e) => e.data.runId === run.id && e.data.status === 'paused')).toBe(false);
}, 20_000);

describe('stream lifecycle', () => {
  let own: Api;
  let url: string;
  beforeAll(async () => {
    own = await startApi('api_events_life', {}, { sseHeartbeatMs: 50 });
    await own.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(own.app.server.address() as AddressInfo).port}`;
  }, 30_000);
  afterAll(async () => own.close());

  test('idle streams get heartbeat comments, and closing the app ends them', async () => {
    const stream = await openStream(ADMIN_TOKEN, undefined, url);
    await eventually('two heartbeats', async () => stream.comments.filter((c) => c === ': heartbeat').length >= 2, 5_000, 20);
    await own.app.close();
    await eventually('the stream to end', async () => stream.ended, 5_000, 20);
  });
});
