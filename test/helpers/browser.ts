import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

// The console's tests drive Debian's Chromium through playwright-core (never the `playwright`
// package's own browser download, which cannot reach the internet here).

/** The Chromium to drive: CHROMIUM_PATH, else `chromium` (or `chromium-browser`) on the PATH. */
export function chromiumPath(): string {
  const given = process.env['CHROMIUM_PATH'];
  const dirs = (process.env['PATH'] ?? '').split(path.delimiter).filter(Boolean);
  const found = given ? (existsSync(given) ? given : undefined) : ['chromium', 'chromium-browser'].flatMap((name) => dirs.map((d) => path.join(d, name))).find((p) => existsSync(p));
  if (found) return found;
  throw new Error('Chromium is not installed: run `apt-get update && apt-get install -y --no-install-recommends chromium` (or set CHROMIUM_PATH) to run the console tests.');
}

export async function launchBrowser(): Promise<Browser> {
  // root (CI) needs --no-sandbox
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
}

const SHOTS = path.resolve('docs/console');
export const WIDTHS = [1280, 390] as const;

/** Saves the page at 1280 and 390 px wide as docs/console/<name>-<width>.png, then goes back to 1280. */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SHOTS, { recursive: true });
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    // let the layout settle at the new width
    await page.waitForTimeout(150);
    await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
