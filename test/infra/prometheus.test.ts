import { api, runsToEnd, startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { forPrometheus, metricNames, panelQueries } from './dashboard.js';
import { composeConfig, startPrometheus, type PrometheusServer } from './prometheus-server.js';

// A real Prometheus (Debian's binary) scraping a real stack with infra/prometheus.yml's jobs and
// alert rules, every second: every target is up, every dashboard query runs and returns data
// from metrics the services really export, and the "run paused for its account" alert fires
// once a run really pauses because the platform refused its account. The rules are loaded as
// they are, with no override: that alert has no `for`, the pause itself is the event.

const RATE_INTERVAL = '30s'; // Grafana's $__rate_interval, for a 1 s scrape
const PAUSED_ALERT = 'MetronomeRunPausedForAccount';

let stack: Stack;
let prometheus: PrometheusServer;
beforeAll(async () => {
  stack = await startStack({ senders: 2 });
  const { jobs, ruleFiles } = composeConfig();
  const host = (port: number) => `127.0.0.1:${port}`;
  const targets: Record<string, string[]> = {
    api: [new URL(stack.apiUrl).host],
    scheduler: [host(stack.schedulerMetricsPort)],
    sender: stack.senderMetricsPorts.map(host),
  };
  // a job added to infra/prometheus.yml must be mapped here, or this test would not see it
  expect(jobs.sort()).toEqual(Object.keys(targets).sort());
  prometheus = await startPrometheus(targets, ruleFiles);
}, 90_000);
afterAll(async () => {
  await prometheus?.stop();
  await stack?.stop();
}, 60_000);

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}
const firing = async () =>
  (await prometheus.api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts.filter((a) => a.state === 'firing').map((a) => a.labels['alertname']);
const query = (expr: string) => prometheus.api<{ resultType: string; result: unknown[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`);

async function httpAccount(token: string, externalId: string): Promise<string> {
  const account = await api(stack, 'POST', '/v1/accounts', token, {
    platform: 'http',
    credentials: { apiKey: 'sandbox-api-key-0001' },
    name: externalId,
    externalId,
    maxSendPerMinute: 6000,
  });
  expect(account.status).toBe(201);
  return account.body.id;
}

async function campaign(token: string, accountId: string, targets: string[], at: Date, active: boolean): Promise<string> {
  const created = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId,
    name: `prom-${accountId.slice(0, 6)}`,
    timezone: 'UTC',
    schedule: { type: 'once', at: at.toISOString() },
    messages: [{ type: 'text', text: 'hi' }],
    targets,
    active,
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

const sandboxPut = async (path: string, body: unknown) =>
  expect((await fetch(`${stack.sandboxUrl}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).ok).toBe(
    true,
  );

test('a real Prometheus scrapes every service, runs every dashboard query, and fires the paused-run alert', async () => {
  const tenant = (await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'prometheus' })).body;

  // A scheduled run that meets a flood wait and a chat the platform refuses, then finishes.
  const healthy = await httpAccount(tenant.token, 'prom-healthy');
  await sandboxPut('/sandbox/accounts/prom-healthy', { floodWaitSeconds: 1 });
  await sandboxPut('/sandbox/chats/prom-healthy/chat-gone', { error: 'chat_not_found' });
  const scheduled = await campaign(tenant.token, healthy, ['chat-1', 'chat-2', 'chat-3', 'chat-gone'], new Date(Date.now() + 2000), true);
  const run = await eventually(
    'the scheduler to create the run',
    async () => {
      const runs = (await api(stack, 'GET', `/v1/runs?campaignId=${scheduled}`, tenant.token)).body.items as { id: string }[];
      return runs[0];
    },
    30_000,
    200,
  );
  const [done] = await runsToEnd(stack, tenant.token, [run.id], 60_000, 250);
  expect(done!.status).toBe('partial');

  // Every target is up.
  const expected = 2 + stack.senderMetricsPorts.length;
  await eventually(
    'every target up',
    async () => {
      const { activeTargets } = await prometheus.api<{ activeTargets: { health: string; scrapePool: string }[] }>('/api/v1/targets');
      return activeTargets.length === expected && activeTargets.every((t) => t.health === 'up');
    },
    30_000,
    500,
  );

  // Every metric a panel names is in what Prometheus scraped, and every query runs and answers.
  const queries = panelQueries();
  expect(queries.length).toBeGreaterThanOrEqual(15);
  const wanted = [...new Set(queries.flatMap((q) => metricNames(q.expr)))];
  const missing = await eventually(
    'every metric of the dashboard scraped',
    async () => {
      const names = new Set(await prometheus.api<string[]>('/api/v1/label/__name__/values'));
      const absent = wanted.filter((n) => !names.has(n));
      return absent.length === 0 ? absent : null;
    },
    30_000,
    500,
  ).catch(async () => {
    const names = new Set(await prometheus.api<string[]>('/api/v1/label/__name__/values'));
    return wanted.filter((n) => !names.has(n));
  });
  expect(missing).toEqual([]);
  for (const { panel, expr } of queries) {
    const answer = await eventually(
      `"${panel}" to return data`,
      async () => {
        const data = await query(forPrometheus(expr, RATE_INTERVAL));
        return data.result.length > 0 ? data : null;
      },
      30_000,
      500,
    ).catch((error: Error) => ({ panel, expr, error: error.message }));
    expect({ panel, expr, answer: 'error' in answer ? answer.error : 'data' }).toEqual({ panel, expr, answer: 'data' });
  }

  // Nothing is paused yet: the rules are evaluated, and the alert is silent.
  const rules = await eventually(
    'the rules to be evaluated',
    async () => {
      const { groups } = await prometheus.api<{ groups: { rules: { name: string; query: string; health: string; lastEvaluation: string }[] }[] }>(
        '/api/v1/rules',
      );
      const all = groups.flatMap((g) => g.rules);
      return all.length >= 10 && all.every((r) => r.health === 'ok' && !r.lastEvaluation.startsWith('0001')) ? all : null;
    },
    30_000,
    500,
  );
  expect(await firing()).not.toContain(PAUSED_ALERT);
  // the rules, too, name only scraped metrics; the readiness alert's route label is the API's own
  const scraped = new Set(await prometheus.api<string[]>('/api/v1/label/__name__/values'));
  expect(
    rules.flatMap((r) =>
      metricNames(r.query)
        .filter((n) => !scraped.has(n))
        .map((n) => `${r.name}: ${n}`),
    ),
  ).toEqual([]);
  expect((await query('metronome_http_request_duration_seconds_count{route="/readyz", status="200"}')).result.length).toBeGreaterThan(0);

  // The platform refuses the next account: its run pauses (account_unavailable) and the alert fires.
  const refused = await httpAccount(tenant.token, 'prom-refused');
  await sandboxPut('/sandbox/accounts/prom-refused', { unauthorized: true });
  const manual = await campaign(tenant.token, refused, ['chat-1', 'chat-2'], new Date(), false);
  const paused = await api(stack, 'POST', `/v1/campaigns/${manual}/runs`, tenant.token);
  expect(paused.status).toBe(201);
  const [stopped] = await runsToEnd(stack, tenant.token, [paused.body.id], 60_000, 250);
  expect(stopped).toMatchObject({ status: 'paused' });
  const alerts = await eventually(
    'the paused-run alert to fire',
    async () => {
      const names = await firing();
      return names.includes(PAUSED_ALERT) ? names : null;
    },
    30_000,
    500,
  );
  // and it is the only alert firing: a healthy stack trips no other rule
  expect(alerts).toEqual([PAUSED_ALERT]);
}, 240_000);
