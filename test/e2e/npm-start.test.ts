// `npm start` twice in a row on one data directory, as a newcomer would run it: the second start
// reuses the admin token and the demo tenant, retires the first start's campaigns before its
// scheduler runs (so none fires late, even when they were overdue), every progress line's counts
// add up to the run's total, and SIGINT to the npm process alone stops the whole stack.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { byLine, eventually, freePort, GiveUp } from '@metronome/testkit';
import { groupAlive, groupGone } from '../helpers/npm-run.js';
import { createTestDatabase, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let db: TestDatabase;
let dataDir: string;
let env: Record<string, string>;
const started: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase('npm_start');
  dataDir = mkdtempSync(path.join(tmpdir(), 'metronome-start-'));
  // jest sets NODE_ENV=test; npm start is the development stack (no SECRETS_KEY needed)
  env = {
    NODE_ENV: 'development',
    DATABASE_URL: db.url,
    REDIS_URL,
    KEY_PREFIX: uniquePrefix('start'),
    METRONOME_DATA_DIR: dataDir,
    PORT: String(await freePort()),
    SANDBOX_PORT: String(await freePort()),
  };
});

afterAll(async () => {
  for (const npm of started) if (npm.pid !== undefined && groupAlive(npm.pid)) process.kill(-npm.pid, 'SIGKILL');
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Start {
  npm: ChildProcess;
  lines: string[];
  waitFor(what: string, match: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm start` in a process group of its own, so the test can tell whether anything outlives it. */
function npmStart(): Start {
  const { ADMIN_TOKEN: _unset, ...inherited } = process.env;
  const npm = spawn('npm', ['start'], { cwd: ROOT, detached: true, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(npm);
  const lines: string[] = [];
  const onLine = byLine((line) => lines.push(line));
  npm.stdout!.on('data', onLine);
  npm.stderr!.on('data', onLine);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (what: string, match: RegExp, timeoutMs = 90_000) =>
    eventually(
      `a line for ${what}`,
      async () => {
        const found = lines.find((l) => match.test(l));
        if (found) return found;
        // thrown, so a timeout's message carries the output; once npm has exited, at once
        const missing = `npm start: no line for ${what}. Output:\n${lines.slice(-30).join('\n')}`;
        throw npm.exitCode !== null ? new GiveUp(missing) : new Error(missing);
      },
      timeoutMs,
      200,
    );
  return { npm, lines, waitFor, exited };
}

/** Every progress line: "N/T sent, n in flight, n pending…" must add up to T. */
function progressSums(lines: string[]): { line: string; total: number; sum: number }[] {
  return lines
    .map((line) => ({ line, m: / (\d+)\/(\d+) sent((?:, \d+ [a-z ]+?)*)(?= {2}|$)/.exec(line) }))
    .filter((x): x is { line: string; m: RegExpExecArray } => x.m !== null)
    .map(({ line, m }) => {
      const rest = [...(m[3] ?? '').matchAll(/, (\d+) /g)].reduce((n, r) => n + Number(r[1]), 0);
      return { line, total: Number(m[2]), sum: Number(m[1]) + rest };
    });
}

async function stopWithSigint(start: Start): Promise<void> {
  process.kill(start.npm.pid!, 'SIGINT');
  const timeout = new Promise((resolve) => setTimeout(() => resolve('npm start still running 30 s after SIGINT'), 30_000).unref());
  expect(await Promise.race([start.exited, timeout])).toEqual({ code: 0, signal: null });
  expect(await groupGone(start.npm.pid!, 5_000)).toBe(true);
  expect(start.lines.some((l) => l.includes('✓ stopped'))).toBe(true);
}

const demoState = () => JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { tenantId: string; campaignIds: string[] };

test('a second npm start reuses the demo tenant, no earlier campaign fires, every line adds up, SIGINT to npm stops all', async () => {
  const first = npmStart();
  await first.waitFor('the 10-chat demo run finishing', /Demo: every 2 minutes to 10 chats\s+success\s+10\/10 sent/);
  await first.waitFor('a progress line of the 50-chat run', /Demo: every minute to 50 chats\s+running/);
  const before = demoState();
  const adminToken = readFileSync(path.join(dataDir, 'admin-token'), 'utf8');
  await stopWithSigint(first);

  // As if the first start had been ten minutes ago: its campaigns are due again now.
  await sql`update runs set scheduled_at = scheduled_at - interval '10 minutes' where campaign_id = any(${before.campaignIds}::uuid[])`.execute(db.db);
  const overdue = await sql`update campaigns set next_run_at = now() where id = any(${before.campaignIds}::uuid[]) and active`.execute(db.db);
  expect(Number(overdue.numAffectedRows)).toBe(2);
  const secondStartedAt = new Date();

  const second = npmStart();
  await second.waitFor('the tenant reused', /reusing the demo tenant "Demo"; its 2 previous campaigns are retired/);
  await second.waitFor('the new 10-chat run finishing', /Demo: every 2 minutes to 10 chats\s+success\s+10\/10 sent/);
  const after = demoState();
  expect(after.tenantId).toBe(before.tenantId);
  expect(readFileSync(path.join(dataDir, 'admin-token'), 'utf8')).toBe(adminToken);
  expect(
    await db.db
      .selectFrom('tenants')
      .select((e) => e.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ).toEqual({ n: 1 });

  // none of the first start's campaigns made a run after the second start began
  const late = await db.db
    .selectFrom('runs')
    .select(['id', 'campaign_id', 'created_at'])
    .where('campaign_id', 'in', before.campaignIds)
    .where('created_at', '>=', secondStartedAt)
    .execute();
  expect(late).toEqual([]);
  const old = await db.db.selectFrom('campaigns').select(['active', 'deleted_at']).where('id', 'in', before.campaignIds).execute();
  expect(old.every((c) => !c.active && c.deleted_at !== null)).toBe(true);
  await stopWithSigint(second);

  const sums = progressSums([...first.lines, ...second.lines]);
  expect(sums.length).toBeGreaterThan(3);
  expect(sums.filter((s) => s.sum !== s.total)).toEqual([]);
  // the printed addresses a newcomer needs
  const banner = second.lines.join('\n');
  expect(banner).toMatch(/\/docs/);
  expect(banner).toMatch(/Metrics\s+http:\/\/127\.0\.0\.1:\d+\/metrics/);
}, 240_000);
