// `npm run <service>` as docker compose runs it: SIGTERM goes to the npm process only (PID 1 in
// a container; nothing signals the rest of the group), and must still reach node, which drains
// and exits 0, leaving no process behind.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@metronome/testkit';
import { createTestDatabase, uniquePrefix, REDIS_URL, type TestDatabase } from '../helpers/test-env.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface NpmService {
  npm: ChildProcess;
  lines: Record<string, unknown>[];
  waitFor(what: string, match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm run <script>` in a process group of its own, so the test can tell whether anything outlives npm. */
function npmRun(script: string, env: Record<string, string>): NpmService {
  const npm = spawn('npm', ['run', script], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      raw.push(line);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        continue; // npm's own banner lines
      }
      for (const wake of [...waiters]) wake();
    }
  };
  npm.stdout!.on('data', onData);
  npm.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.once('exit', (code, signal) => resolve({ code, signal })));
  const waitFor = (what: string, match: (line: Record<string, unknown>) => boolean, timeoutMs = 15_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const found = lines.find(match);
        if (!found) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`npm run ${script}: no log line for ${what} within ${timeoutMs} ms. Output:\n${raw.slice(-20).join('\n')}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { npm, lines, waitFor, exited };
}

/** Whether any process is left in the group `pgid`. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function groupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

let db: TestDatabase | undefined;
let running: NpmService | undefined;

afterEach(async () => {
  // Whatever outlived npm (today: node, orphaned) is this test's own process group.
  const pgid = running?.npm.pid;
  if (pgid !== undefined && groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
  running = undefined;
});

afterAll(async () => {
  await db?.drop();
});

const database = async () => (db ??= await createTestDatabase('npm_signals')).url;

test.each([
  ['sandbox', async () => ({ SANDBOX_PORT: String(await freePort()) }), 'sandbox listening'],
  ['api', async () => ({ DATABASE_URL: await database(), REDIS_URL, KEY_PREFIX: uniquePrefix('sig'), HOST: '127.0.0.1', PORT: String(await freePort()) }), 'control-api listening'],
  ['scheduler', async () => ({ DATABASE_URL: await database(), REDIS_URL, KEY_PREFIX: uniquePrefix('sig'), METRICS_PORT: '0' }), 'scheduler ready'],
])('SIGTERM to `npm run %s` alone reaches node: it drains, exits 0, and nothing is left', async (script, env, ready) => {
  running = npmRun(script, await env());
  const { npm, waitFor, exited } = running;
  await waitFor('start-up', (l) => l['msg'] === ready);

  process.kill(npm.pid!, 'SIGTERM');

  // node logs the signal it received as it starts draining
  await waitFor('the drain', (l) => l['signal'] === 'SIGTERM', 10_000);
  expect(await exited).toEqual({ code: 0, signal: null });
  expect(await groupGone(npm.pid!, 2_000)).toBe(true);
}, 40_000);
