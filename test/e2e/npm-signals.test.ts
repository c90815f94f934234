// `npm run <service>` as docker compose runs it: SIGTERM goes to the npm process only (PID 1 in
// a container; nothing signals the rest of the group), and must still reach node, which drains
// and exits 0, leaving no process behind.
import { freePort } from '@metronome/testkit';
import { groupAlive, groupGone, npmRun, type NpmService } from '../helpers/npm-run.js';
import { createTestDatabase, uniquePrefix, REDIS_URL, type TestDatabase } from '../helpers/test-env.js';

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
  [
    'api',
    async () => ({ DATABASE_URL: await database(), REDIS_URL, KEY_PREFIX: uniquePrefix('sig'), HOST: '127.0.0.1', PORT: String(await freePort()) }),
    'control-api listening',
  ],
  ['scheduler', async () => ({ DATABASE_URL: await database(), REDIS_URL, KEY_PREFIX: uniquePrefix('sig'), METRICS_PORT: '0' }), 'scheduler ready'],
  ['sender', async () => ({ DATABASE_URL: await database(), REDIS_URL, KEY_PREFIX: uniquePrefix('sig'), METRICS_PORT: '0' }), 'sender ready'],
])(
  'SIGTERM to `npm run %s` alone reaches node: it drains, exits 0, and nothing is left',
  async (script, env, ready) => {
    running = npmRun(script, await env());
    const { npm, waitFor, exited } = running;
    await waitFor('start-up', (l) => l['msg'] === ready);

    process.kill(npm.pid!, 'SIGTERM');

    // node logs the signal it received as it starts draining
    await waitFor('the drain', (l) => l['signal'] === 'SIGTERM', 10_000);
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(await groupGone(npm.pid!, 2_000)).toBe(true);
  },
  40_000,
);
