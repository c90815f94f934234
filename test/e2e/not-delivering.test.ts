import { api, createHttpAccount, createTenant, runsToEnd, sandbox, stackForFile } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// An account that stops delivering (CONTRACT §3 "Receipts"), with real processes: the sandbox
// posts receipts, then its switch stops them for the account. Within the configured window
// the scheduler sets it cooling, reason not_delivering; another run of it waits; when the
// sandbox lets the withheld receipts go, the account is active again by itself and the run ends.

const stack = stackForFile({ senders: 1, schedulerEnv: { NOT_DELIVERING_SENDS: '5', NOT_DELIVERING_WINDOW: '10m', NOT_DELIVERING_GRACE: '2s' } });

const receipts = (body: Record<string, unknown>) =>
  fetch(`${stack.sandboxUrl}/sandbox/receipts`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function runOf(token: string, accountId: string, name: string, targets: string[]): Promise<string> {
  const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId,
    name,
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: name }],
    targets,
  });
  expect(campaign.status).toBe(201);
  return eventually(
    `the run of ${name}`,
    async () => (await api(stack, 'GET', `/v1/runs?campaignId=${campaign.body.id}`, token)).body.items[0]?.id as string | undefined,
  );
}

test('receipts stop: not_delivering within the window, its other run waits, and it recovers by itself when receipts return', async () => {
  const tenant = await createTenant(stack, 'Silent');
  const token: string = tenant.body.token;
  const account = await createHttpAccount(stack, token, { name: 'S', externalId: 'silent-a', maxSendPerMinute: 60 });
  expect(account.status).toBe(201);
  const accountId: string = account.body.id;
  expect((await receipts({ url: `${stack.apiUrl}/v1/platform/receipts`, deliveredAfterMs: 50 })).status).toBe(200);

  // receipts flow: the account is known to get them
  const first = await runOf(token, accountId, 'First', ['c-1', 'c-2', 'c-3']);
  await runsToEnd(stack, token, [first], 60_000, 250);
  await eventually('the first run delivered', async () => (await api(stack, 'GET', `/v1/runs/${first}`, token)).body.counts.delivered === 3, 30_000, 250);

  // the platform keeps taking messages but tells no delivery
  expect((await receipts({ stoppedAccounts: ['silent-a'] })).status).toBe(200);
  // one send a second: the second run's sends go undelivered while the third's wait their turn
  const second = await runOf(token, accountId, 'Second', ['d-1', 'd-2', 'd-3', 'd-4', 'd-5', 'd-6']);
  const third = await runOf(
    token,
    accountId,
    'Third',
    Array.from({ length: 20 }, (_, i) => `e-${i + 1}`),
  );
  const cooling = await eventually(
    'the account not delivering',
    async () => {
      const a = await api(stack, 'GET', `/v1/accounts/${accountId}`, token);
      return a.body.status === 'cooling' ? a.body.cooling : null;
    },
    60_000,
    250,
  );
  expect(cooling).toMatchObject({ reason: 'not_delivering', until: null });
  // the series the alert MetronomeAccountNotDelivering reads (its promtool test: infra/prometheus/alerts.test.yml)
  const schedulerMetrics = await (await fetch(`http://127.0.0.1:${stack.schedulerMetricsPort}/metrics`)).text();
  expect(schedulerMetrics).toMatch(
    /metronome_account_cooling_total\{[^}]*platform="http"[^}]*reason="not_delivering"[^}]*\} 1\b|metronome_account_cooling_total\{[^}]*reason="not_delivering"[^}]*platform="http"[^}]*\} 1\b/,
  );

  // its other run waits, saying why, and sends no more
  const waiting = await eventually('the third run waiting', async () => (await api(stack, 'GET', `/v1/runs/${third}`, token)).body.waiting, 30_000, 250);
  expect(waiting).toMatchObject({ reason: 'cooling', until: null, detail: expect.stringContaining('not delivering') });
  // the gate stopped within one send of the detection, judged at the platform by time
  const received = async () => (await sandbox<{ items: { chatId: string; receivedAt: number }[] }>(stack, '/sandbox/messages?account=silent-a')).items;
  const sentTo = async (prefix: string) => (await received()).map((m) => m.chatId).filter((c) => c.startsWith(prefix));
  const detectedAt = Date.parse(cooling.since);
  expect((await received()).filter((m) => m.receivedAt > detectedAt).length).toBeLessThanOrEqual(1);

  // the withheld receipts come, late: active again by itself, and the waiting run ends (its
  // pace raised first: what is left to send need not take a second a chat)
  const raised = await api(stack, 'PATCH', `/v1/accounts/${accountId}`, token, { maxSendPerMinute: 1200 });
  expect(raised.body).toMatchObject({ maxSendPerMinute: 1200, status: 'cooling' });
  expect((await receipts({ stoppedAccounts: [] })).status).toBe(200);
  await eventually('the account active again', async () => (await api(stack, 'GET', `/v1/accounts/${accountId}`, token)).body.status === 'active', 30_000, 250);
  const done = await runsToEnd(stack, token, [second, third], 150_000, 500);
  expect(done.map((r) => r.status)).toEqual(['success', 'success']);
  // every chat once
  expect((await sentTo('e-')).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `e-${i + 1}`).sort());
  expect((await sentTo('d-')).sort()).toEqual(['d-1', 'd-2', 'd-3', 'd-4', 'd-5', 'd-6']);
  await eventually(
    'the withheld deliveries recorded',
    async () => (await api(stack, 'GET', `/v1/runs/${second}`, token)).body.counts.delivered === 6,
    30_000,
    250,
  );
}, 300_000);
