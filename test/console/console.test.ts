import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { screenshots } from '../helpers/browser.js';
import { api, type StackView } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import * as kit from './console-kit.js';
import { chats, consoleSuite, runItem } from './console-kit.js';

// The operator console in a real Chromium against the real stack (API, scheduler, a sender and
// the sandbox as processes). Each test signs in a fresh browser context (its own session
// storage). The screenshots in docs/console/ are written here.

// a stack of its own: the admin's Activity page shows every tenant's runs
const suite = consoleSuite({ senders: 1 });
let stack: StackView;
let browser: Browser;
beforeAll(() => {
  ({ stack, browser } = suite);
});
const tenant = (name: string) => kit.tenant(suite, name);
const account = (token: string, externalId: string, perMinute: number, name = externalId) => kit.account(suite, token, externalId, perMinute, name);
const campaign = (token: string, body: Record<string, unknown>) => kit.campaign(suite, token, body);
const runNow = (token: string, campaignId: string) => kit.runNow(suite, token, campaignId);
const runStatus = (token: string, id: string) => kit.runStatus(suite, token, id);
const open = (token: string, hash = '#/') => kit.open(suite, token, hash);

// The window case waits for the next minute boundary (windows are HH:MM, so 15–75 s): it is
// started before the other tests and judged after them, so that wait overlaps theirs. Its page
// stays open throughout: the pause must reach it without a reload.
async function startWindowCase() {
  const token = await tenant('Window');
  const acc = await account(token, 'window-acc', 20, 'Slow account');
  // The window ends at the next minute boundary, at least 15 s away: 30 chats at 20/min need
  // 90 s, so it closes on pending chats.
  const now = new Date();
  const end = new Date(Math.ceil((now.getTime() + 15_000) / 60_000) * 60_000);
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  const start = new Date(end.getTime() - 3 * 60_000);
  const campaignId = await campaign(token, {
    accountId: acc,
    name: 'Closing window',
    targets: chats('w', 30),
    deliveryWindow: { start: hhmm(start), end: hhmm(end) },
  });
  const runId = await runNow(token, campaignId);
  const page = await open(token);
  let loads = 0;
  page.on('load', () => loads++);
  await runItem(page, runId).locator('.pill-running').waitFor({ timeout: 30_000 });
  return { token, acc, campaignId, runId, page, loads: () => loads };
}
let windowCase: ReturnType<typeof startWindowCase>;
beforeAll(() => {
  windowCase = startWindowCase();
  // judged (and its failure reported) by the last test
  windowCase.catch(() => undefined);
});

test('the console is served at / without a token, and its API types match /openapi.json', async () => {
  const res = await fetch(`${stack.apiUrl}/`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
  expect(await res.text()).toContain('/app.js');
  expect((await fetch(`${stack.apiUrl}/app.js`)).status).toBe(200);
  expect((await fetch(`${stack.apiUrl}/package.json`)).status).toBe(404);
  const check = spawnSync(process.execPath, ['console/scripts/openapi-types.mjs', '--check', stack.apiUrl], { encoding: 'utf8' });
  expect(check.stderr).toBe('');
  expect(check.status).toBe(0);
}, 30_000);

test('sign in with the admin token: every tenant, kept in session storage, never in the URL', async () => {
  const token = await tenant('Signin');
  const acc = await account(token, 'signin-acc', 6000);
  const runId = await runNow(token, await campaign(token, { accountId: acc, name: 'Signin campaign', targets: chats('s', 2) }));
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${stack.apiUrl}/`);
  await page.getByLabel('Tenant or admin token').fill('mtr_wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('That token was not accepted.').waitFor();
  await screenshots(page, 'sign-in');
  await page.getByLabel('Tenant or admin token').fill(stack.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Admin (every tenant)').waitFor();
  await runItem(page, runId).waitFor();
  expect(await page.evaluate("sessionStorage.getItem('metronome.token')")).toBe(stack.adminToken);
  expect(page.url()).not.toContain(stack.adminToken);
  await context.close();
}, 30_000);

test('the #token= link signs in once and takes the token out of the address bar', async () => {
  const token = await tenant('Link');
  const page = await open(token);
  expect(page.url()).toBe(`${stack.apiUrl}/#/`);
  expect(await page.evaluate("sessionStorage.getItem('metronome.token')")).toBe(token);
  await page.context().close();
}, 30_000);

test('a partial run notifies, and Retry failed sends its failed chats again', async () => {
  const token = await tenant('Retry');
  const acc = await account(token, 'retry-acc', 6000);
  // a permanent failure an operator can fix; `forbidden` would also put the chat on the account's
  // suppression list, and a retry skips suppressed chats
  const put = await fetch(`${stack.sandboxUrl}/sandbox/chats/retry-acc/r-2`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: 'message_invalid' }),
  });
  expect(put.ok).toBe(true);
  const page = await open(token);
  const runId = await runNow(token, await campaign(token, { accountId: acc, name: 'Retry campaign', targets: chats('r', 3) }));
  await runItem(page, runId).locator('.pill-partial').waitFor({ timeout: 30_000 });
  await page.locator('.toast').first().waitFor();
  await runItem(page, runId).locator('.bad', { hasText: '1 failed' }).waitFor();
  // the run's timing facts: it started, so its start lag is said
  const lag = runItem(page, runId).locator('dt', { hasText: 'Start lag' }).locator('xpath=following-sibling::dd');
  expect(await lag.textContent()).toMatch(/^(on time|.+ late)$/);
  await fetch(`${stack.sandboxUrl}/sandbox/chats/retry-acc/r-2`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: null }),
  });
  await runItem(page, runId).getByRole('button', { name: 'Retry failed' }).click();
  await runItem(page, runId).locator('.pill-success').waitFor({ timeout: 30_000 });
  expect(await runStatus(token, runId)).toBe('success');
  await page.context().close();
}, 90_000);

test('an interval-held run shows its waiting sentence; Cancel asks first', async () => {
  const token = await tenant('Interval');
  const acc = await account(token, 'interval-acc', 6000, 'Fast account');
  const campaignId = await campaign(token, {
    accountId: acc,
    name: 'Every ten minutes',
    schedule: { type: 'interval', everySeconds: 600 },
    targets: chats('i', 3),
  });
  const first = await runNow(token, campaignId);
  await eventually('the first run to finish', async () => (await runStatus(token, first)) === 'success', 30_000, 200);
  const held = await runNow(token, campaignId);
  const page = await open(token);
  const sentence = await runItem(page, held).locator('.waiting').innerText();
  expect(sentence).toMatch(/3 chats held until .* 10-minute interval/);
  await screenshots(page, 'activity-interval');

  await page.goto(`${stack.apiUrl}/#/campaigns/${campaignId}`);
  // the schedule in words is the API's scheduleText
  const words = (await api(stack, 'GET', `/v1/campaigns/${campaignId}`, token)).body.scheduleText as string;
  expect(words).toMatch(/^every 10 minutes/);
  await page.locator('p.schedule', { hasText: words }).waitFor();
  await runItem(page, held).getByRole('button', { name: 'Cancel' }).click();
  await runItem(page, held).getByText('Cancel this run?').waitFor();
  expect(await runStatus(token, held)).not.toBe('cancelled');
  await screenshots(page, 'campaign');
  await runItem(page, held).getByRole('button', { name: 'Yes, cancel run' }).click();
  await runItem(page, held).locator('.pill-cancelled').waitFor();
  expect(await runStatus(token, held)).toBe('cancelled');
  await page.goto(`${stack.apiUrl}/#/campaigns`);
  await page.getByRole('link', { name: 'Every ten minutes' }).waitFor();
  await screenshots(page, 'campaigns');
  await page.context().close();
}, 90_000);

test('a disconnected account shows its fix: a new API key brings it back', async () => {
  const token = await tenant('Disconnected');
  const acc = await account(token, 'disc-acc', 6000, 'Refused account');
  // the platform now wants another key than the one the account holds
  const newKey = 'sandbox-api-key-rotated-0002';
  const put = await fetch(`${stack.sandboxUrl}/sandbox/accounts/disc-acc`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiKey: newKey }),
  });
  expect(put.ok).toBe(true);
  await runNow(token, await campaign(token, { accountId: acc, name: 'Refused campaign', targets: chats('d', 2) }));
  await eventually(
    'the account to disconnect',
    async () => (await api(stack, 'GET', `/v1/accounts/${acc}`, token)).body.status === 'disconnected',
    30_000,
    200,
  );
  const page = await open(token, '#/accounts');
  const card = page.locator(`li[data-account-id="${acc}"]`);
  await card.locator('.pill-disconnected').waitFor();
  await card.getByText('The platform refused the API key.').waitFor();
  await screenshots(page, 'accounts');
  await card.getByLabel('New API key').fill('short');
  await card.getByRole('button', { name: 'Save API key' }).click();
  await card.locator('.error', { hasText: /16/ }).waitFor();
  await card.getByLabel('New API key').fill(newKey);
  await card.getByRole('button', { name: 'Save API key' }).click();
  await card.locator('.pill-active').waitFor();
  expect((await api(stack, 'GET', `/v1/accounts/${acc}`, token)).body.status).toBe('active');
  await page.context().close();
}, 90_000);

test("another tenant's run id in the URL shows not found", async () => {
  const mine = await tenant('Owner');
  const acc = await account(mine, 'owner-acc', 6000);
  const runId = await runNow(mine, await campaign(mine, { accountId: acc, name: 'Owned', targets: chats('o', 1) }));
  const page = await open(await tenant('Stranger'), `#/runs/${runId}`);
  await page.getByRole('heading', { name: 'Run not found' }).waitFor();
  await page.getByText('Not found: it does not exist, or it is not yours to see.').waitFor();
  await page.context().close();
}, 30_000);

test('the admin filters Activity by tenant (picked by name) and by account, both answered by the API', async () => {
  const first = await tenant('Filter North');
  const second = await tenant('Filter South');
  const northA = await account(first, 'north-a', 6000, 'North A');
  const northB = await account(first, 'north-b', 6000, 'North B');
  const south = await account(second, 'south-a', 6000, 'South A');
  const runA = await runNow(first, await campaign(first, { accountId: northA, name: 'North A campaign', targets: chats('na', 1) }));
  const runB = await runNow(first, await campaign(first, { accountId: northB, name: 'North B campaign', targets: chats('nb', 1) }));
  const runS = await runNow(second, await campaign(second, { accountId: south, name: 'South campaign', targets: chats('sa', 1) }));
  const page = await open(stack.adminToken);
  const asked: URL[] = [];
  page.on('request', (r) => r.url().includes('/v1/runs?') && asked.push(new URL(r.url())));
  for (const id of [runA, runB, runS]) await runItem(page, id).waitFor();

  const secondId = (await api(stack, 'GET', '/v1/me', second)).body.tenantId as string;
  await page.getByLabel('Tenant').selectOption({ label: 'Filter South' });
  await runItem(page, runA).waitFor({ state: 'detached' });
  await runItem(page, runS).waitFor();
  expect(asked.some((u) => u.searchParams.get('tenantId') === secondId)).toBe(true);
  // the account picker offers the chosen tenant's accounts only
  expect(await page.getByLabel('Account').locator('option').allInnerTexts()).toEqual(['All', 'South A']);

  // The answer for "All" comes late, after the one for North B: the page must not show it.
  let lateAnswered!: () => void;
  const late = new Promise<void>((resolve) => (lateAnswered = resolve));
  await page.route(
    (url) => url.pathname === '/v1/runs' && !url.searchParams.has('tenantId') && !url.searchParams.has('accountId'),
    async (route) => {
      const response = await route.fetch();
      await new Promise((r) => setTimeout(r, 1_500));
      await route.fulfill({ response }).catch(() => undefined);
      lateAnswered();
    },
    { times: 1 },
  );
  await page.getByLabel('Tenant').selectOption({ label: 'All' });
  await page.getByLabel('Account').selectOption({ label: 'North B' });
  await runItem(page, runB).waitFor();
  await runItem(page, runS).waitFor({ state: 'detached' });
  await late;
  await page.waitForTimeout(300);
  expect(await runItem(page, runS).count()).toBe(0);
  expect(await runItem(page, runA).count()).toBe(0);
  expect(asked.some((u) => u.searchParams.get('accountId') === northB)).toBe(true);
  await page.context().close();
}, 60_000);

test('a run pauses at window close without a reload, names its bottleneck and notifies; Resume finishes it', async () => {
  const { token, acc, campaignId, runId, page, loads } = await windowCase;
  await runItem(page, runId).locator('.pill-paused').waitFor({ timeout: 100_000 });
  expect(loads()).toBe(0);
  const explanation = await runItem(page, runId).locator('.waiting').innerText();
  expect(explanation).toMatch(/Bottleneck: it needed \d+\/min for 30 chats .* paced at 20\/min/);
  await page.locator('.toast', { hasText: 'Reminder paused' }).waitFor();
  await screenshots(page, 'activity');

  await page.getByRole('link', { name: 'Closing window' }).first().click();
  await page.getByRole('heading', { name: /Closing window/ }).waitFor();
  await page.locator('td[data-label="Waiting"]', { hasText: /./ }).first().waitFor();
  await screenshots(page, 'run');

  // Widen the window and speed the account up (the operator's fix), then Resume in the page.
  expect((await api(stack, 'PATCH', `/v1/campaigns/${campaignId}`, token, { deliveryWindow: { start: '00:00', end: '24:00' } })).status).toBe(200);
  expect((await api(stack, 'PATCH', `/v1/accounts/${acc}`, token, { maxSendPerMinute: 6000 })).status).toBe(200);
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.locator('h1 .pill-success').waitFor({ timeout: 60_000 });
  expect(await runStatus(token, runId)).toBe('success');
  await page.context().close();
}, 200_000);
