import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { eventually } from './test-env.js';

// Checks every console browser test gets for free: axe-core on each page state a test shows
// (screenshots() runs it, and test/console/every-page.test.ts visits each page once), and no
// error logged in the browser while a test runs (launchBrowser() watches every context).

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The impacts that fail a page: axe's "moderate" and "minor" are advice. */
const FAILING = ['serious', 'critical'];

/**
 * axe-core's serious and critical violations on the page as it is now, one line each (rule,
 * impact, what it wants, the first elements it names). Injected once per document through the
 * DevTools protocol, so the page's Content-Security-Policy does not stop it.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(`${AXE}\n;void 0`);
  const violations = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")) as {
    id: string;
    impact: string | null;
    help: string;
    nodes: { target: unknown[] }[];
  }[];
  return violations
    .filter((v) => FAILING.includes(v.impact ?? ''))
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .slice(0, 4)
          .map((n) => n.target.join(' '))
          .join(', ')}${v.nodes.length > 4 ? ', …' : ''}`,
    );
}

/** Fails naming the page state and each serious or critical violation axe-core finds on it. */
export async function expectAccessible(page: Page, where: string): Promise<void> {
  expect({ where, violations: await accessibilityViolations(page) }).toEqual({ where, violations: [] });
}

const logged: string[] = [];

// An API refusal the page asked for and shows (a 4xx answered to a form, a 404 for a run that is
// not the tenant's) is logged by Chromium itself, naming the request: not the console's error. A
// static file the page misses (a 404 for /favicon.ico) is.
const REFUSAL = /^Failed to load resource: the server responded with a status of 4\d\d\b/;
const apiRefusal = (message: ConsoleMessage) => REFUSAL.test(message.text()) && new URL(message.location().url || 'about:blank').pathname.startsWith('/v1/');

function onConsole(message: ConsoleMessage): void {
  if (message.type() !== 'error' || apiRefusal(message)) return;
  const at = message.page()?.url() ?? '';
  const what = message.text().startsWith('Failed to load resource') ? ` (${message.location().url})` : '';
  logged.push(`console.error at ${at.replace(/#token=.*/, '#token=…')}: ${message.text()}${what}`);
}

/** Every context the browser opens from now on reports its console errors and uncaught exceptions to takeBrowserErrors(). */
export function watchBrowserErrors(browser: Browser): Browser {
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.on('console', onConsole);
    context.on('weberror', (e) => logged.push(`uncaught in ${e.page()?.url() ?? 'a page'}: ${e.error().stack ?? e.error().message}`));
    return context;
  };
  return browser;
}

/** What the browser logged as errors since the last call. */
export function takeBrowserErrors(): string[] {
  return logged.splice(0);
}

/**
 * For a test that provokes a browser error on purpose (a dropped request): waits until the
 * browser logged one matching `pattern` and takes it, so that the check after the test does not
 * count it. Any other error stays counted.
 */
export async function takeExpectedBrowserError(pattern: RegExp): Promise<string> {
  const index = await eventually(`the browser to log ${pattern}`, async () => logged.findIndex((e) => pattern.test(e)) + 1, 5_000, 20);
  return logged.splice(index - 1, 1)[0]!;
}

/** Registers a check after each test of the file: the browser logged no error during it. */
export function failOnBrowserErrors(): void {
  afterEach(() => {
    expect(takeBrowserErrors()).toEqual([]);
  });
}
