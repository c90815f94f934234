import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { api, createHttpAccount, createTenant, sandbox, sharedStackForFile, type SandboxMessage } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// The walking skeleton end to end: API → PostgreSQL → scheduler → BullMQ → two senders →
// sandbox, each a separate process. On the run's shared stack: its accounts' records only.

const stack = sharedStackForFile();
const ACCOUNTS = ['pipeline-a', 'pipeline-b', 'pipeline-c'];

/** Runs the senders started on a `schedule` trigger so far (metronome_run_start_lag_seconds), over both senders. */
async function scheduleLagSamples(): Promise<number> {
  let samples = 0;
  for (const port of stack.senderMetricsPorts) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const m = /metronome_run_start_lag_seconds_count\{[^}]*trigger="schedule"[^}]*\} (\d+)/.exec(text);
    samples += m ? Number(m[1]) : 0;
    expect(text).toContain('metronome_job_outcomes_total');
  }
  return samples;
}

function png(seed: number): Buffer {
  // any distinct bytes will do for the sandbox; a real PNG header keeps it honest
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), deflateSync(Buffer.alloc(256, seed))]);
}

const chats = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);

test('300 chats over two tenants and three accounts: both parts, exactly once, in order; media once per account; paced', async () => {
  const lagBefore = await scheduleLagSamples();
  const t1 = await createTenant(stack, 'Tenant one');
  const t2 = await createTenant(stack, 'Tenant two');
  expect(t1.status).toBe(201);
  expect(t2.status).toBe(201);
  const tok1: string = t1.body.token;
  const tok2: string = t2.body.token;

  const accA = await createHttpAccount(stack, tok1, { name: 'A', externalId: 'pipeline-a', maxSendPerMinute: 6000, groupConcurrency: 5 });
  const accB = await createHttpAccount(stack, tok1, { name: 'B', externalId: 'pipeline-b', maxSendPerMinute: 6000 });
  // C is the paced one: 300 sends a minute (one every 200 ms), burst 1
  const accC = await createHttpAccount(stack, tok2, { name: 'C', externalId: 'pipeline-c', maxSendPerMinute: 300, groupConcurrency: 3 });
  for (const a of [accA, accB, accC]) expect(a.status).toBe(201);

  const img1 = png(1);
  const img2 = png(2);
  const m1 = await api(stack, 'POST', '/v1/media?filename=one.png', tok1, img1, { 'content-type': 'image/png' });
  const m2 = await api(stack, 'POST', '/v1/media?filename=two.png', tok2, img2, { 'content-type': 'image/png' });
  expect(m1.status).toBe(201);
  expect(m2.status).toBe(201);
  expect(m1.body.sha256).toBe(createHash('sha256').update(img1).digest('hex'));

  const now = new Date().toISOString();
  const campaign = (accountId: string, mediaId: string, targets: string[], name: string) => ({
    accountId,
    name,
    timezone: 'Asia/Kuala_Lumpur',
    schedule: { type: 'once', at: now },
    messages: [
      { type: 'text', text: `Hello from ${name}` },
      { type: 'media', mediaId, caption: 'see attached' },
    ],
    targets,
  });
  const specs = [
    { token: tok1, body: campaign(accA.body.id, m1.body.id, chats('a', 150), 'A campaign'), account: 'pipeline-a' },
    { token: tok1, body: campaign(accB.body.id, m1.body.id, chats('b', 125), 'B campaign'), account: 'pipeline-b' },
    { token: tok2, body: campaign(accC.body.id, m2.body.id, chats('c', 25), 'C campaign'), account: 'pipeline-c' },
  ];
  const campaigns: ((typeof specs)[number] & { id: string })[] = [];
  for (const s of specs) {
    const res = await api(stack, 'POST', '/v1/campaigns', s.token, s.body);
    expect(res.status).toBe(201);
    campaigns.push({ ...s, id: res.body.id as string });
  }

  // Every campaign gets one run, and every run finishes.
  const runs = await eventually(
    'every run to finish',
    async () => {
      const found = [];
      for (const c of campaigns) {
        const list = await api(stack, 'GET', `/v1/runs?campaignId=${c.id}`, c.token);
        const run = list.body.items[0];
        if (!run || !['success', 'partial', 'failed', 'paused', 'cancelled'].includes(run.status)) return null;
        found.push({ ...c, run });
      }
      return found;
    },
    120_000,
    500,
  );
  for (const r of runs) {
    expect(r.run.status).toBe('success');
    const n = r.body.targets.length;
    expect(r.run.counts).toEqual({ total: n, pending: 0, inFlight: 0, sent: n, failed: 0, skipped: 0, unknown: 0, delivered: 0, read: 0, replied: 0 });
    expect(r.run.trigger).toBe('schedule');
    expect(Date.parse(r.run.startedAt)).toBeGreaterThanOrEqual(Date.parse(r.run.scheduledAt));
  }

  // What the platform received: each chat both parts, once each, text first.
  const items: SandboxMessage[] = [];
  for (const account of ACCOUNTS) items.push(...(await sandbox<{ items: SandboxMessage[] }>(stack, `/sandbox/messages?account=${account}`)).items);
  expect(items).toHaveLength(600);
  for (const r of runs) {
    for (const chat of r.body.targets) {
      const got = items.filter((m) => m.account === r.account && m.chatId === chat).sort((x, y) => x.seq - y.seq);
      expect(got.map((m) => m.partIndex)).toEqual([0, 1]);
      expect(got[0]!.part).toEqual({ type: 'text', text: `Hello from ${r.body.name}` });
      expect(got[1]!.part.type).toBe('media');
      expect(got[1]!.part.caption).toBe('see attached');
      expect(got.every((m) => m.idempotencyKey.startsWith(`${r.run.id}:${chat}:`))).toBe(true);
    }
  }
  const duplicates = await sandbox<{ items: { account: string }[] }>(stack, '/sandbox/duplicates');
  expect(duplicates.items.filter((d) => ACCOUNTS.includes(d.account))).toEqual([]);
  // each image uploaded once per account that sends it
  const stats = await sandbox<{ uploads: { account: string; sha256: string; count: number }[] }>(stack, '/sandbox/stats');
  const uploads = stats.uploads
    .filter((u) => ACCOUNTS.includes(u.account))
    .map((u) => `${u.account}:${u.count}`)
    .sort();
  expect(uploads).toEqual(['pipeline-a:1', 'pipeline-b:1', 'pipeline-c:1']);

  // Pacing: account C at 300/min (5 a second) with burst 1 never has more than 5 + RATE_BURST = 6 sends in any second.
  const { times } = await sandbox<{ times: number[] }>(stack, '/sandbox/accounts/pipeline-c/sends');
  expect(times).toHaveLength(50);
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  expect(most).toBeLessThanOrEqual(6);
  // ... and the 50 sends were spread over about 49 intervals of 200 ms (arrival times differ
  // from send times by network jitter, hence the second of slack; unpaced they take ~1 s)
  expect(sorted[sorted.length - 1]! - sorted[0]!).toBeGreaterThanOrEqual(49 * 200 - 1000);

  // Start lag is measured by the senders: this file's three runs at least (other files' runs
  // on the shared stack count too), and what they sent.
  expect((await scheduleLagSamples()) - lagBefore).toBeGreaterThanOrEqual(3);
  for (const port of stack.senderMetricsPorts) {
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/metronome_sends_total\{[^}]*result="sent"/);
  }
}, 180_000);
