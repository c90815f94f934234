import { drawSendDelayMs, gateLimits, pacedPerMinute } from '@metronome/core';
import { AccountLock, AccountPace, loadScripts, redisKeys } from '@metronome/redis';
import { apiForFile, call, createCampaign, NOW, seedRun, tenantForFile } from './harness.js';

// `waiting` reads an account's next send as the gate's pace script computes it, with the
// senders' RATE_BURST and the human gap apart (libs/core limits.ts: one entry each). Slots are
// reserved through the real script as the gate reserves them; the script's own answer to the
// next reservation is the gate's next send, and `waiting.until` must be that within 100 ms.

const BURST = 3;
const api = apiForFile('api_waiting_burst', { rateBurst: BURST });
const t = tenantForFile(api, 'burst');
beforeEach(() => api.clock.set(NOW));

test('RATE_BURST 3 and a 2 s human gap: the waiting view says when the gate sends next, by the gap and then by the pace', async () => {
  const campaign = await createCampaign(api, t);
  const accountId = campaign.accountId;
  const patched = await call(api, 'PATCH', `/v1/accounts/${accountId}`, t.token, { maxSendPerMinute: 6, sendDelaySeconds: { min: 2, max: 2 } });
  expect(patched.status).toBe(200);
  const run = await seedRun(api, campaign.id, 'running', { a: 'pending', b: 'pending', c: 'pending', d: 'pending' }, { scheduledAt: new Date(NOW - 600_000) });
  await api.db
    .updateTable('runs')
    .set({ window_end_at: new Date(NOW + 3_600_000) })
    .where('id', '=', run.id)
    .execute();

  // the gate's reservations: its limits from the account, a gap drawn per send, the senders' burst
  const scripts = loadScripts(api.redis);
  const keys = redisKeys(api.prefix);
  const pace = new AccountPace(scripts, keys);
  const lock = await new AccountLock(scripts, keys).acquire(accountId, 600_000);
  if (!lock.held) throw new Error('lock');
  expect(await pace.safe.rebuild(accountId, lock.token, NOW, 0, [])).toBe(true);
  const account = await api.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
  const limits = gateLimits(
    { sendDelaySeconds: { min: account.send_delay_min_seconds!, max: account.send_delay_max_seconds! }, hourlyCap: null, dailyCap: null, warmup: null },
    NOW,
  )!;
  const chat = { chatId: '', perMinute: 0 };
  const reserve = (maxWaitMs: number) =>
    pace.safe.reserve(accountId, lock.token, api.clock.now(), pacedPerMinute(6), BURST, chat, maxWaitMs, {
      gapAfterMs: drawSendDelayMs(limits.delay!, Math.random),
      hourlyCap: limits.hourlyCap,
      dailyCap: limits.dailyCap,
    });
  /** the gate's next send: what the script answers a reservation asked now (one that reserves nothing) */
  const gateNext = async () => {
    const probe = await reserve(0);
    if (!('limitedBy' in probe)) throw new Error(`expected a wait, got ${JSON.stringify(probe)}`);
    return api.clock.now() + probe.waitMs;
  };
  const waiting = async () => (await call(api, 'GET', `/v1/runs/${run.id}`, t.token)).body.waiting;

  // two sends: the second waited for the gap; the burst leaves the pace free, the gap holds the next (now + 4 s)
  expect(await reserve(60_000)).toEqual({ reserved: true, waitMs: 0 });
  expect(await reserve(60_000)).toEqual({ reserved: true, waitMs: 2_000 });
  const byGap = await waiting();
  expect(byGap).toMatchObject({ reason: 'pace', detail: expect.stringContaining('human gap') });
  expect(Math.abs(Date.parse(byGap.until) - (await gateNext()))).toBeLessThanOrEqual(100);
  expect(Date.parse(byGap.until)).toBe(NOW + 4_000);

  // two more: the burst is spent, and the pace (10.2 s a slot) holds the next beyond the gap
  expect(await reserve(60_000)).toEqual({ reserved: true, waitMs: 4_000 });
  expect(await reserve(60_000)).toEqual({ reserved: true, waitMs: 10_200 });
  api.clock.set(NOW + 1_234);
  const byPace = await waiting();
  expect(byPace).toMatchObject({ reason: 'pace', detail: expect.stringContaining("account's pace") });
  expect(Math.abs(Date.parse(byPace.until) - (await gateNext()))).toBeLessThanOrEqual(100);
  expect(Date.parse(byPace.until)).toBe(NOW + 20_400);
});
