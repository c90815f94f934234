import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Download, type Page } from 'playwright-core';
import { expectAccessible, watchBrowserErrors } from './page-checks.js';

// The console's tests drive Debian's Chromium through playwright-core (never the `playwright`
// package's own browser download, which cannot reach the internet here).

/** The Chromium to drive: CHROMIUM_PATH, else `chromium` (or `chromium-browser`) on the PATH. */
export function chromiumPath(): string {
  const given = process.env['CHROMIUM_PATH'];
  const dirs = (process.env['PATH'] ?? '').split(path.delimiter).filter(Boolean);
  const found = given
    ? existsSync(given)
      ? given
      : undefined
    : ['chromium', 'chromium-browser'].flatMap((name) => dirs.map((d) => path.join(d, name))).find((p) => existsSync(p));
  if (found) return found;
  throw new Error(
    'Chromium is not installed: run `apt-get update && apt-get install -y --no-install-recommends chromium` (or set CHROMIUM_PATH) to run the console tests.',
  );
}

/**
 * The run's shared Chromium when test/global-setup.mjs started one (METRONOME_TEST_BROWSER_WS):
 * a connection whose close() closes only this file's contexts; else a Chromium of the file's own.
 * Its contexts report what their pages log as errors (page-checks.ts, failOnBrowserErrors).
 */
export async function launchBrowser(): Promise<Browser> {
  const shared = process.env['METRONOME_TEST_BROWSER_WS'];
  // root (CI) needs --no-sandbox
  return watchBrowserErrors(shared ? await chromium.connect(shared) : await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] }));
}

/**
 * A download's text, read from its stream: `download.path()` is not available over a remote
 * connection (the run's shared Chromium), the stream is.
 */
export async function downloadedText(download: Download): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

const SHOTS = path.resolve('docs/console');
export const WIDTHS = [1280, 390] as const;

/**
 * Checks the page with axe-core (no serious or critical violation: page-checks.ts), then saves it
 * at 1280 and 390 px wide as docs/console/<name>-<width>.png and goes back to 1280. A file whose bytes are unchanged is not rewritten; under CI (`CI=true`) a file that cannot
 * be written (a read-only checkout) is left as it is, since the pictures are documentation, not
 * what the test judges.
 */
export async function screenshots(page: Page, name: string, dir = SHOTS): Promise<void> {
  await expectAccessible(page, name);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    // let the layout settle at the new width
    await page.waitForTimeout(150);
    await saveIfChanged(path.join(dir, `${name}-${width}.png`), await page.screenshot({ fullPage: true }));
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

export async function saveIfChanged(file: string, bytes: Buffer, ci = process.env['CI'] === 'true'): Promise<'unchanged' | 'written' | 'skipped'> {
  const before = await readFile(file).catch(() => null);
  if (before?.equals(bytes)) return 'unchanged';
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, bytes);
    return 'written';
  } catch (error) {
    if (ci) return 'skipped';
    throw error;
  }
}
