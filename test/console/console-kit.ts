import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { chromiumPath, launchBrowser } from '../helpers/browser.js';
import { failOnBrowserErrors } from '../helpers/page-checks.js';
import { api, SHARED_STACK_SENDERS, sharedStack, startStack, type Stack, type StackView } from '../helpers/stack.js';

// What every console test file shares: the real stack as processes, one Chromium, and the API
// calls that set a scene up (a tenant, an account, a campaign, a run). Each test signs in a fresh
// browser context, so each has its own session storage.

export const API_KEY = 'sandbox-api-key-0001';

type StackOptions = Parameters<typeof startStack>[0];

export interface ConsoleSuite<S extends StackView = StackView> {
  stack: S;
  browser: Browser;
}

/**
 * Starts the stack and the browser before the file's tests, and stops both after them. Without
 * options, the run's shared default stack when there is one (helpers/stack.ts, sharedStack, says
 * what a file on it may not do), else one like it; a file given options (even `{ senders: 1 }`)
 * has its own.
 */
export function consoleSuite(): ConsoleSuite;
export function consoleSuite(options: StackOptions | (() => StackOptions)): ConsoleSuite<Stack>;
export function consoleSuite(options?: StackOptions | (() => StackOptions)): ConsoleSuite {
  const suite = {} as ConsoleSuite;
  beforeAll(async () => {
    chromiumPath(); // fails first, with how to install Chromium, when it is missing
    // a function: options known only once an earlier beforeAll ran (a fake platform's URL)
    suite.stack =
      (options === undefined && sharedStack()) ||
      (await startStack(typeof options === 'function' ? options() : (options ?? { senders: SHARED_STACK_SENDERS })));
    suite.browser = await launchBrowser();
  }, 90_000);
  failOnBrowserErrors();
  // As long as the start is allowed: in a full CI run (both cores busy with other files) the
  // browser's close and five processes' drains have taken over 60 s.
  afterAll(async () => {
    await suite.browser?.close();
    await suite.stack?.stop();
  }, 90_000);
  return suite;
}

export async function tenant(s: ConsoleSuite, name: string): Promise<string> {
  const t = await api(s.stack, 'POST', '/v1/tenants', s.stack.adminToken, { name });
  expect(t.status).toBe(201);
  return t.body.token;
}

export async function account(s: ConsoleSuite, token: string, externalId: string, maxSendPerMinute: number, name = externalId): Promise<string> {
  const a = await api(s.stack, 'POST', '/v1/accounts', token, {
    platform: 'http',
    credentials: { apiKey: API_KEY },
    name,
    externalId,
    maxSendPerMinute,
    groupConcurrency: 1,
  });
  expect(a.status).toBe(201);
  return a.body.id;
}

export async function campaign(s: ConsoleSuite, token: string, body: Record<string, unknown>): Promise<string> {
  const c = await api(s.stack, 'POST', '/v1/campaigns', token, {
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: 'Hello' }],
    active: false,
    ...body,
  });
  expect(c.status).toBe(201);
  return c.body.id;
}

export async function runNow(s: ConsoleSuite, token: string, campaignId: string): Promise<string> {
  const r = await api(s.stack, 'POST', `/v1/campaigns/${campaignId}/runs`, token);
  expect(r.status).toBe(201);
  return r.body.id;
}

export const chats = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);
export const runStatus = async (s: ConsoleSuite, token: string, id: string) => (await api(s.stack, 'GET', `/v1/runs/${id}`, token)).body.status as string;

/**
 * A page signed in the way `npm start` links it: the token in the URL fragment, taken in once.
 * `context` adds options to the browser context (permissions, downloads).
 */
export async function open(s: ConsoleSuite, token: string, hash = '#/', context: BrowserContextOptions = {}): Promise<Page> {
  const ctx = await s.browser.newContext({ viewport: { width: 1280, height: 900 }, ...context });
  const page = await ctx.newPage();
  await page.goto(`${s.stack.apiUrl}/#token=${encodeURIComponent(token)}`);
  await page.getByRole('heading', { name: 'Activity' }).waitFor();
  if (hash !== '#/') await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  return page;
}

export const runItem = (page: Page, id: string) => page.locator(`li[data-run-id="${id}"]`);
