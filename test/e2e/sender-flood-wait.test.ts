import { scrapeSum } from '@metronome/testkit';
import { api, sandbox, startStack, type Stack, runsToEnd } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// A flood wait is a hard lower bound for the whole account on every replica: three senders
// share three runs of one account; once the platform answers flood_wait, no replica starts a
// send from that account until the wait is over, and the retry budget is untouched.

const GROUP_CONCURRENCY = 3;
const WAIT_SECONDS = 3;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ senders: 3, senderEnv: { SENDS_PER_JOB: '5' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

interface Rejection {
  at: number;
  reason: string;
}

test('a flood wait stops every replica from sending for that account until it ends', async () => {
  const tenant = await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'flood' });
  const token: string = tenant.body.token;
  const acc = await api(stack, 'POST', '/v1/accounts', token, {
    platform: 'http',
    credentials: { apiKey: 'sandbox-api-key-0001' },
    name: 'f',
    externalId: 'flood-acc',
    // 20 a second: the 90 sends take ~4.5 s besides the wait (the pace is not what is judged)
    maxSendPerMinute: 1200,
    groupConcurrency: GROUP_CONCURRENCY,
  });
  expect(acc.status).toBe(201);
  const runIds: string[] = [];
  for (let c = 0; c < 3; c++) {
    const targets = Array.from({ length: 30 }, (_, i) => `chat-${c}-${i}`);
    const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
      accountId: acc.body.id,
      name: `c${c}`,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: 'hi' }],
      targets,
      active: false,
    });
    const run = await api(stack, 'POST', `/v1/campaigns/${campaign.body.id}/runs`, token);
    expect(run.status).toBe(201);
    runIds.push(run.body.id);
  }
  await eventually('the fan-out to start', async () => ((await sandbox(stack, '/sandbox/stats')).accepted as number) >= 10, 30_000, 20);
  // the platform's next answer for this account is flood_wait
  const put = await fetch(`${stack.sandboxUrl}/sandbox/accounts/flood-acc`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ floodWaitSeconds: WAIT_SECONDS }),
  });
  expect(put.ok).toBe(true);

  const runs = await runsToEnd(stack, token, runIds, 120_000, 200);

  for (const r of runs) expect(r.status).toBe('success');

  const { items: rejections } = await sandbox<{ items: Rejection[] }>(stack, '/sandbox/rejections?account=flood-acc');
  const floods = rejections.filter((r) => r.reason === 'flood_wait');
  expect(floods.length).toBeGreaterThanOrEqual(1);
  const first = Math.min(...floods.map((r) => r.at));
  // Only sends already on the wire when the first answer came back can meet the wait: at most
  // one per lane, all within moments of the first.
  expect(floods.length).toBeLessThanOrEqual(GROUP_CONCURRENCY);
  for (const r of floods) expect(r.at - first).toBeLessThan(1000);
  const { times } = await sandbox<{ times: number[] }>(stack, '/sandbox/accounts/flood-acc/sends');
  expect(times.filter((t) => t >= first && t < first + WAIT_SECONDS * 1000)).toEqual([]);
  expect(times.filter((t) => t >= first + WAIT_SECONDS * 1000).length).toBeGreaterThan(0);

  // persisted for every replica (and the scheduler), and no retry spent on it
  const account = await stack.db.db.selectFrom('accounts').select('blocked_until').where('id', '=', acc.body.id).executeTakeFirstOrThrow();
  expect(account.blocked_until!.getTime()).toBeGreaterThanOrEqual(first + WAIT_SECONDS * 1000 - 1000);
  const targets = await stack.db.db.selectFrom('run_targets').select(['attempts']).where('run_id', 'in', runIds).execute();
  expect(targets.every((t) => t.attempts === 1)).toBe(true);
  const waited = await Promise.all(
    stack.senderMetricsPorts.map((p) => scrapeSum(`http://127.0.0.1:${p}/metrics`, 'metronome_provider_wait_seconds_total', 'scope="account"')),
  );
  expect(waited.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(WAIT_SECONDS);
  // more than one replica took part in the fan-out
  const sentBy = await Promise.all(stack.senderMetricsPorts.map((p) => scrapeSum(`http://127.0.0.1:${p}/metrics`, 'metronome_sends_total', 'result="sent"')));
  expect(sentBy.filter((n) => n > 0).length).toBeGreaterThan(1);
}, 180_000);
