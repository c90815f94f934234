// Before the integration tests: a migrated template database that each test file clones
// (CREATE DATABASE … TEMPLATE is a file copy: much faster than migrating per file). Its name
// carries a hash of migrations/, so a changed migration gets a new template, and test runs
// going on at the same time never drop one another's. Plain ESM on the build output
// (`npm test` builds first), because jest loads global setup outside its module mapping.
// When the run holds console files, one Chromium for the whole run (each file connects to it
// and opens its own contexts): see test/helpers/browser.ts. When it holds a file on the shared
// stack (a console file's `consoleSuite()`, an end-to-end file's `sharedStackForFile(`), one
// default stack (API, scheduler, two senders, the sandbox on a database of its own) that those
// files share, each with tenants and sandbox accounts of its own: see test/helpers/stack.ts,
// sharedStack. test/global-teardown.mjs stops both.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@metronome/db';
import { createScratchDatabase, startStack } from '@metronome/testkit';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome_test';

export default async function globalSetup(globalConfig) {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) hash.update(file).update(readFileSync(path.join(MIGRATIONS_DIR, file)));
  const template = `metronome_test_tpl_${hash.digest('hex').slice(0, 12)}`;
  const url = new URL(DATABASE_URL);
  url.pathname = `/${template}`;
  await ensureDatabase(url.toString());
  await migrate(url.toString(), MIGRATIONS_DIR);
  // test workers start after this and inherit the variables
  process.env.METRONOME_TEST_TEMPLATE = template;
  const files = runFiles(globalConfig, ['console', 'e2e']);
  const browser = files === 'all' || files.some((f) => f.includes(`${path.sep}console${path.sep}`));
  const shared = files === 'all' || files.some((f) => SHARED_STACK_USE.test(readFileSync(f, 'utf8')));
  await Promise.all([browser && startSharedBrowser(), shared && startSharedStack(template)]);
}

/** The default stack (test/helpers/stack.ts, sharedStack) for the files that share it. */
async function startSharedStack(template) {
  const database = await createScratchDatabase(DATABASE_URL, 'test_shared', template);
  const keyPrefix = `shared-${randomBytes(4).toString('hex')}`;
  try {
    // two senders: SHARED_STACK_SENDERS in test/helpers/stack.ts, which a file run alone starts
    const stack = await startStack({ databaseUrl: database.url, redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', keyPrefix, senders: 2 });
    globalThis.__metronomeSharedStack = { stack, database };
    const { apiUrl, sandboxUrl, adminToken, senderMetricsPorts } = stack;
    process.env.METRONOME_TEST_SHARED_STACK = JSON.stringify({
      apiUrl,
      sandboxUrl,
      adminToken,
      senderMetricsPorts,
      databaseUrl: database.url,
      databaseName: database.name,
      keyPrefix,
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** How a file asks for the shared stack (test/console/console-kit.ts, test/helpers/stack.ts). */
const SHARED_STACK_USE = /consoleSuite\(\)|sharedStackForFile\(/;

/** The files of these test folders the run may hold: 'all' when no path pattern was given. */
function runFiles(globalConfig, folders) {
  const patterns = globalConfig?.testPathPatterns?.patterns ?? [];
  if (patterns.length === 0) return 'all';
  const root = globalConfig.rootDir ?? process.cwd();
  const files = folders.flatMap((folder) => readdirSync(path.join(root, 'test', folder)).map((f) => path.join(root, 'test', folder, f)));
  return files.filter((f) => f.endsWith('.test.ts') && patterns.some((p) => new RegExp(p, 'i').test(f)));
}

async function startSharedBrowser() {
  const executablePath = chromiumPath();
  // no Chromium: the console files fail on their own, naming how to install it
  if (!executablePath) return;
  const { chromium } = await import('playwright-core');
  // root (CI) needs --no-sandbox
  const server = await chromium.launchServer({ executablePath, args: ['--no-sandbox'] });
  globalThis.__metronomeBrowserServer = server;
  process.env.METRONOME_TEST_BROWSER_WS = server.wsEndpoint();
}

/** As test/helpers/browser.ts's chromiumPath, without throwing. */
function chromiumPath() {
  const given = process.env.CHROMIUM_PATH;
  if (given) return existsSync(given) ? given : undefined;
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  return ['chromium', 'chromium-browser'].flatMap((name) => dirs.map((d) => path.join(d, name))).find((p) => existsSync(p));
}
