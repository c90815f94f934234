import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { call, startApi, type Api } from './harness.js';

// /openapi.json as outside tools read it: Redocly's linter with its recommended rules (the
// repository's redocly.yaml) finds no error, and every operation has a unique camelCase
// operationId, the name client generators give its method.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REDOCLY = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Operation {
  operationId?: string;
  security?: unknown[];
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}
interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

let api: Api;
let document: Document;
let dir: string;
beforeAll(async () => {
  api = await startApi('api_openapi_lint');
  document = (await call(api, 'GET', '/openapi.json', null)).body as Document;
  dir = await mkdtemp(path.join(tmpdir(), 'openapi-lint-'));
}, 30_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await api.close();
});

const operations = () =>
  Object.entries(document.paths).flatMap(([route, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ name: `${method.toUpperCase()} ${route}`, op })),
  );

/** Redocly's problems with `doc`, run offline: no telemetry, no update check. */
async function lint(doc: unknown): Promise<LintProblem[]> {
  const file = path.join(dir, 'openapi.json');
  await writeFile(file, JSON.stringify(doc, null, 2));
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  const args = [REDOCLY, 'lint', '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'json', file];
  // exits 1 when it finds an error: the JSON report is on stdout either way
  const stdout = await promisify(execFile)(process.execPath, args, { env, cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
    (r) => r.stdout,
    (err: { stdout?: string }) => {
      if (!err.stdout) throw err;
      return err.stdout;
    },
  );
  return (JSON.parse(stdout) as { problems: LintProblem[] }).problems;
}

const errorsOf = (problems: LintProblem[]) =>
  problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);

test('Redocly (recommended rules) finds no error in /openapi.json, and no unused schema', async () => {
  const problems = await lint(document);
  expect(errorsOf(problems)).toEqual([]);
  expect(problems.filter((p) => p.ruleId === 'no-unused-components').map((p) => p.message)).toEqual([]);
}, 60_000);

test('the linter is live: an operation without security or the document without servers is an error', async () => {
  const broken = structuredClone(document) as Document & { servers?: unknown };
  delete broken.servers;
  delete broken.paths['/healthz']!['get']!.security;
  const errors = errorsOf(await lint(broken));
  expect(errors).toEqual(
    expect.arrayContaining([expect.stringMatching(/^no-empty-servers/), expect.stringMatching(/^security-defined at #\/paths\/~1healthz\/get/)]),
  );
}, 60_000);

test('every operation has a camelCase operationId, none twice', () => {
  const ops = operations();
  expect(ops.length).toBeGreaterThan(30);
  expect(ops.filter(({ op }) => !/^[a-z][a-zA-Z0-9]*$/.test(op.operationId ?? '')).map(({ name }) => name)).toEqual([]);
  const ids = ops.map(({ op }) => op.operationId);
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
});

test('operationIds are stable: clients name their methods from them', () => {
  const byOperation = Object.fromEntries(operations().map(({ name, op }) => [name, op.operationId]));
  expect(byOperation).toMatchObject({
    'GET /healthz': 'getHealth',
    'GET /readyz': 'getReadiness',
    'GET /metrics': 'getMetrics',
    'POST /v1/tenants': 'createTenant',
    'GET /v1/tenants': 'listTenants',
    'GET /v1/me': 'getMe',
    'POST /v1/accounts': 'createAccount',
    'GET /v1/accounts': 'listAccounts',
    'GET /v1/accounts/{id}': 'getAccount',
    'PATCH /v1/accounts/{id}': 'updateAccount',
    'POST /v1/accounts/{id}/cooling/lift': 'liftAccountCooling',
    'GET /v1/accounts/{id}/suppressions': 'listSuppressions',
    'POST /v1/accounts/{id}/suppressions': 'addSuppressions',
    'DELETE /v1/accounts/{id}/suppressions/{chatId}': 'removeSuppression',
    'POST /v1/accounts/{id}/pair': 'pairAccount',
    'POST /v1/media': 'uploadMedia',
    'GET /v1/media': 'listMedia',
    'GET /v1/media/{id}': 'getMedia',
    'POST /v1/campaigns': 'createCampaign',
    'GET /v1/campaigns': 'listCampaigns',
    'GET /v1/campaigns/{id}': 'getCampaign',
    'PATCH /v1/campaigns/{id}': 'updateCampaign',
    'DELETE /v1/campaigns/{id}': 'deleteCampaign',
    'POST /v1/campaigns/{id}/runs': 'runCampaignNow',
    'GET /v1/campaigns/{id}/occurrences': 'listCampaignOccurrences',
    'POST /v1/campaigns/preview': 'previewCampaign',
    'GET /v1/runs': 'listRuns',
    'GET /v1/runs/{id}': 'getRun',
    'GET /v1/runs/{id}/targets': 'listRunTargets',
    'POST /v1/runs/{id}/pause': 'pauseRun',
    'POST /v1/runs/{id}/resume': 'resumeRun',
    'POST /v1/runs/{id}/cancel': 'cancelRun',
    'POST /v1/runs/{id}/retry-failed': 'retryFailedRun',
    'POST /v1/webhooks': 'createWebhook',
    'GET /v1/webhooks': 'listWebhooks',
    'GET /v1/webhooks/{id}': 'getWebhook',
    'PATCH /v1/webhooks/{id}': 'updateWebhook',
    'DELETE /v1/webhooks/{id}': 'deleteWebhook',
    'GET /v1/webhooks/{id}/deliveries': 'listWebhookDeliveries',
    'POST /v1/webhooks/{id}/deliveries/{deliveryId}/redeliver': 'redeliverWebhookDelivery',
    'GET /v1/events': 'streamEvents',
  });
});

test('the routes without authentication say so (security: []), the /v1 routes need the bearer token', () => {
  for (const { name, op } of operations()) {
    // the http platform's receipts are authenticated by an account's API key, not a tenant token
    const wanted = name.includes(' /v1/platform/') ? [{ platformKey: [] }] : name.includes(' /v1/') ? [{ bearer: [] }] : [];
    expect([name, op.security]).toEqual([name, wanted]);
  }
});
