import { randomUUID } from 'node:crypto';
import { DEVELOPMENT_SECRETS_KEY, seal, type ProxyShown } from '@metronome/core';
import { AccountRepository, accountProxies } from '@metronome/db';
import { createRedis, loadScripts, redisKeys, SocketLeases } from '@metronome/redis';
import type { ProxyReport } from '@metronome/transports';
import { gramjsClientFactory, TelegramUserTransport, UserClientPool } from '@metronome/transports/telegram-user';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';
import { closedPort, gramjsTestSession } from '../helpers/test-socks5-proxy.js';

// A telegram_user account whose proxy refuses, through the real sender job and GramJS itself
// (no fake of the network): one job, one connection attempt; nothing is sent, no attempt is
// counted, the account waits 30 s and shows why, and its run stays open to go on once the proxy works.

let h: SenderHarness;
let report: ProxyReport = async () => undefined;
const leaseRedis = createRedis(REDIS_URL, 'test-tg-user-proxy');
beforeAll(async () => {
  const leases = new SocketLeases(loadScripts(leaseRedis), redisKeys(uniquePrefix('tg-proxy')), 2_000);
  h = await startSenderHarness({}, undefined, {
    transports: (clock) => ({
      telegram_user: new TelegramUserTransport({
        pool: new UserClientPool({
          makeClient: gramjsClientFactory,
          apiId: 1,
          apiHash: 'x',
          lease: leases,
          holderId: `test-${randomUUID().slice(0, 8)}`,
          reportProxy: (...args) => report(...args),
        }),
        clock,
      }),
    }),
  });
  report = accountProxies(new AccountRepository(h.tdb.db), [DEVELOPMENT_SECRETS_KEY], () => new Date(h.clock.now())).reportProxy;
});
afterAll(async () => {
  await h?.close();
  leaseRedis.disconnect();
});

test('a refusing proxy: the job sends nothing, the chats stay pending with no attempt counted, the account waits 30 s and shows the proxy failed', async () => {
  const port = await closedPort();
  const a = await h.seedAccount({ platform: 'telegram_user', credentials: { session: await gramjsTestSession() } });
  const shown: ProxyShown = { scheme: 'socks5', host: '127.0.0.1', port, authenticated: true };
  await h.tdb.db
    .updateTable('accounts')
    .set({ proxy: seal(`socks5://acct:long-proxy-password-3e1f@127.0.0.1:${port}`, DEVELOPMENT_SECRETS_KEY), proxy_shown: JSON.stringify(shown) })
    .where('id', '=', a.accountId)
    .execute();
  const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: ['-1001', '-1002'], parts: [{ type: 'text', text: 'hi' }] });
  const started = h.clock.now();
  await h.runJob(runId);

  const targets = await h.targets(runId);
  expect(targets.map((t) => [t.chat_id, t.status, t.attempts])).toEqual([
    ['-1001', 'pending', 0],
    ['-1002', 'pending', 0],
  ]);
  expect((await h.run(runId)).status).toBe('running');
  const account = await h.tdb.db
    .selectFrom('accounts')
    .select(['status', 'blocked_until', 'proxy_failure', 'cooling_reason'])
    .where('id', '=', a.accountId)
    .executeTakeFirstOrThrow();
  expect(account).toMatchObject({
    status: 'active',
    proxy_failure: `socks5://127.0.0.1:${port} refused the connection (ECONNREFUSED)`,
    cooling_reason: null,
  });
  // 30 s from the answer (the harness's manual clock moves a few ms while the job runs)
  const waits = account.blocked_until!.getTime() - started;
  expect(waits).toBeGreaterThanOrEqual(30_000);
  expect(waits).toBeLessThan(31_000);
}, 60_000);
