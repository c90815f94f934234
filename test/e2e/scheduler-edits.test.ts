import { api, createHttpAccount, createTenant, sandbox, sharedStackForFile, type SandboxMessage } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// A campaign edited twice a second (name, messages, and its timezone, which makes the API
// recompute next_run_at) never runs early and never skips an occurrence; no chat receives it
// twice less than everySeconds apart. Real processes; checked at the sandbox.

const EVERY_S = 2;
const EDITS = 24;
const EDIT_EVERY_MS = 500;
const stack = sharedStackForFile();

test('edited twice a second for 12 s: every occurrence runs once, on time, never early', async () => {
  const tenant = (await createTenant(stack, 'edits')).body;
  const account = (await createHttpAccount(stack, tenant.token, { name: 'a', externalId: 'edits-a', maxSendPerMinute: 6000 })).body;
  const created = await api(stack, 'POST', '/v1/campaigns', tenant.token, {
    accountId: account.id,
    name: 'edited',
    timezone: 'UTC',
    schedule: { type: 'interval', everySeconds: EVERY_S },
    messages: [{ type: 'text', text: 'v0' }],
    targets: ['x', 'y', 'z'],
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;

  const edits = [
    (i: number) => ({ name: `edited ${i}` }),
    (i: number) => ({ messages: [{ type: 'text', text: `v${i}` }] }),
    (i: number) => ({ timezone: i % 2 ? 'Europe/London' : 'UTC' }),
    () => ({ schedule: { type: 'interval', everySeconds: EVERY_S } }),
  ];
  for (let i = 0; i < EDITS; i++) {
    const patch = await api(stack, 'PATCH', `/v1/campaigns/${id}`, tenant.token, edits[i % edits.length]!(i));
    expect(patch.status).toBe(200);
    // edits spread over several occurrences: wait in real time (an event in time, not an interval of work)
    await new Promise((r) => setTimeout(r, EDIT_EVERY_MS));
  }
  await api(stack, 'PATCH', `/v1/campaigns/${id}`, tenant.token, { active: false });
  const runs = await eventually(
    'the last run to finish',
    async () => {
      const list = (await api(stack, 'GET', `/v1/runs?campaignId=${id}&limit=500`, tenant.token)).body.items as {
        status: string;
        scheduledAt: string;
        startedAt: string | null;
      }[];
      return list.every((r) => !['queued', 'running'].includes(r.status)) ? list : null;
    },
    30_000,
    250,
  );
  const scheduled = runs.map((r) => Date.parse(r.scheduledAt)).sort((a, b) => a - b);
  // 12 s of edits at one occurrence every 2 s, the last cut off by the deactivation
  expect(scheduled.length).toBeGreaterThanOrEqual(5);
  for (let i = 1; i < scheduled.length; i++) {
    const gap = scheduled[i]! - scheduled[i - 1]!;
    expect(gap).toBeGreaterThanOrEqual(EVERY_S * 1000); // never early
    expect(gap).toBeLessThan(2 * EVERY_S * 1000); // never a skipped occurrence
  }
  for (const r of runs) if (r.startedAt) expect(Date.parse(r.startedAt)).toBeGreaterThanOrEqual(Date.parse(r.scheduledAt));

  const { items } = await sandbox<{ items: SandboxMessage[] }>(stack, '/sandbox/messages?account=edits-a');
  for (const chat of ['x', 'y', 'z']) {
    const times = items
      .filter((m) => m.chatId === chat)
      .map((m) => m.receivedAt)
      .sort((a, b) => a - b);
    expect(times.length).toBe(runs.filter((r) => r.startedAt).length);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(EVERY_S * 1000);
  }
}, 120_000);
