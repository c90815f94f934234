import { T0, time, start, stop, call, send, textTo } from './app.fixture.js';

afterEach(() => stop());

describe('the ban model', () => {
  const banned = async (account: string) =>
    ((await call({ method: 'GET', url: '/sandbox/accounts' })).body.items as { account: string; banned: unknown }[]).find((a) => a.account === account)?.banned;

  it('is off by default: any pace goes', async () => {
    await start();
    for (let i = 0; i < 20; i++) expect((await send('acc', textTo(`c${i}`))).status).toBe(200);
    expect(await banned('acc')).toBeNull();
    expect((await call({ method: 'GET', url: '/sandbox/config' })).body).toMatchObject({ banHourlyCap: 0, banDailyCap: 0, banMinGapMs: 0 });
  });

  it('bans an account that breaks its hidden hourly cap: that send and every later one answer 401 account_unauthorized', async () => {
    await start();
    expect((await call({ method: 'PUT', url: '/sandbox/accounts/acc', payload: { banHourlyCap: 2 } })).body).toMatchObject({ banHourlyCap: 2, banned: null });
    expect((await send('acc', textTo('a'))).status).toBe(200);
    time.now += 1_000;
    expect((await send('acc', textTo('b'))).status).toBe(200);
    time.now += 1_000;
    expect(await send('acc', textTo('c'))).toMatchObject({ status: 401, body: { error: 'account_unauthorized' } });
    // a ban is for good: an hour later the account is still closed
    time.now += 3_600_000;
    expect(await send('acc', textTo('d'))).toMatchObject({ status: 401, body: { error: 'account_unauthorized' } });
    expect(await banned('acc')).toEqual({ at: T0 + 2_000, reason: 'a send beyond 2 in one hour' });
    expect((await call({ method: 'GET', url: '/sandbox/stats' })).body).toMatchObject({ accepted: 2, rejected: { banned: 1, unauthorized: 1 } });
    // other accounts are untouched
    expect((await send('other', textTo('a'))).status).toBe(200);
  });

  it('bans on the minimum gap, set for every account by the config (SANDBOX_BAN_MIN_GAP_MS)', async () => {
    await start({ banMinGapMs: 1_500 });
    expect((await send('acc', textTo('a'))).status).toBe(200);
    time.now += 1_500;
    expect((await send('acc', textTo('b'))).status).toBe(200);
    time.now += 1_499;
    expect((await send('acc', textTo('c'))).status).toBe(401);
    expect(await banned('acc')).toMatchObject({ reason: expect.stringContaining('1499 ms after the previous send') });
  });

  it('rejects a bad rule naming the field', async () => {
    await start();
    expect(await call({ method: 'PUT', url: '/sandbox/accounts/acc', payload: { banDailyCap: -1 } })).toMatchObject({
      status: 400,
      body: { detail: expect.stringContaining('banDailyCap') },
    });
    expect(await call({ method: 'PUT', url: '/sandbox/config', payload: { banMinGapMs: 'x' } })).toMatchObject({
      status: 400,
      body: { detail: expect.stringContaining('banMinGapMs') },
    });
  });
});
