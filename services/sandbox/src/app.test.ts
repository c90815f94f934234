import { createHash } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildSandbox } from './app.js';
import type { Limits } from './limits.js';

const T0 = 1_700_000_000_000;
const open: Limits = { latencyMs: 0, maxPerMinute: 0, burst: 1, slowModeSeconds: 0, faultRate: 0, banHourlyCap: 0, banDailyCap: 0, banMinGapMs: 0 };

let app: FastifyInstance;
let now: number;
let slept: number[];

async function start(limits: Partial<Limits> = {}) {
  now = T0;
  slept = [];
  app = await buildSandbox({
    config: { limits: { ...open, ...limits }, seed: 1 },
    clock: () => now,
    sleep: async (ms) => void slept.push(ms),
  });
}

afterEach(async () => {
  await app?.close();
});

/** Each account's API key in these tests (the first request registers it). */
const keyOf = (account: string) => `key-of-${account}`;

/** A platform request carries its account's key unless the test gives an Authorization header itself. */
const call = async (opts: InjectOptions) => {
  const account = /^\/v1\/accounts\/([^/]+)\//.exec(String(opts.url))?.[1];
  const headers = { ...(account !== undefined && { authorization: `Bearer ${keyOf(decodeURIComponent(account))}` }), ...(opts.headers ?? {}) };
  const res = await app.inject({ ...opts, headers });
  const json = res.headers['content-type']?.toString().startsWith('application/json') ? res.json() : undefined;
  return { status: res.statusCode, body: json, raw: res };
};

let keys = 0;
const send = (account: string, body: Record<string, unknown>, key: string | null = `run:${body['chatId']}:${++keys}`) =>
  call({
    method: 'POST',
    url: `/v1/accounts/${account}/messages`,
    headers: key === null ? {} : { 'idempotency-key': key },
    payload: body,
  });
const textTo = (chatId: string, text = 'hello', partIndex = 0, partCount = 1) => ({ chatId, part: { type: 'text', text }, partIndex, partCount });

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const upload = (account: string, bytes: Buffer, contentType = 'image/png', declared: string | null = sha(bytes)) =>
  call({
    method: 'POST',
    url: `/v1/accounts/${account}/media`,
    headers: { 'content-type': contentType, ...(declared === null ? {} : { 'x-media-sha256': declared }) },
    payload: bytes,
  });
const put = (url: string, payload: unknown) => call({ method: 'PUT', url, payload: payload as object });
const get = (url: string) => call({ method: 'GET', url });

describe('platform: messages', () => {
  beforeEach(() => start());

  it('accepts a part and shows it to the control API', async () => {
    expect(await send('acc', textTo('c1', 'hi', 0, 2), 'r:c1:0')).toMatchObject({ status: 200, body: { messageId: 'msg-1' } });
    const chat = await get('/sandbox/chats/acc/c1');
    expect(chat.body).toMatchObject({
      account: 'acc',
      chatId: 'c1',
      settings: { error: null, received: 1 },
      items: [
        {
          account: 'acc',
          chatId: 'c1',
          idempotencyKey: 'r:c1:0',
          partIndex: 0,
          partCount: 2,
          part: { type: 'text', text: 'hi' },
          messageId: 'msg-1',
          receivedAt: T0,
          stampSlackMs: 0,
          answeredAt: T0,
        },
      ],
    });
  });

  it('answers a repeated Idempotency-Key with the same messageId and counts it', async () => {
    await send('acc', textTo('c1'), 'k1');
    expect((await send('acc', textTo('c1'), 'k1')).body).toEqual({ messageId: 'msg-1' });
    expect((await get('/sandbox/messages')).body.items).toHaveLength(1);
    expect((await get('/sandbox/stats')).body.duplicateKeys).toBe(1);
    expect((await get('/sandbox/duplicates')).body.items).toEqual([{ at: T0, account: 'acc', chatId: 'c1', idempotencyKey: 'k1', messageId: 'msg-1' }]);
  });

  it.each([
    ['no Idempotency-Key', () => send('acc', textTo('c1'), null)],
    ['partIndex not below partCount', () => send('acc', textTo('c1', 'x', 1, 1))],
    ['empty text', () => send('acc', textTo('c1', ''))],
    ['unknown part type', () => send('acc', { chatId: 'c1', part: { type: 'sticker' }, partIndex: 0, partCount: 1 })],
    ['no chatId', () => send('acc', { part: { type: 'text', text: 'x' }, partIndex: 0, partCount: 1 })],
    [
      'malformed JSON',
      () =>
        call({
          method: 'POST',
          url: '/v1/accounts/acc/messages',
          headers: { 'content-type': 'application/json', 'idempotency-key': 'k' },
          payload: '{"chatId":',
        }),
    ],
    [
      'empty JSON body',
      () => call({ method: 'POST', url: '/v1/accounts/acc/messages', headers: { 'content-type': 'application/json', 'idempotency-key': 'k' }, payload: '' }),
    ],
    [
      'a non-JSON body',
      () => call({ method: 'POST', url: '/v1/accounts/acc/messages', headers: { 'content-type': 'text/plain', 'idempotency-key': 'k' }, payload: 'hi' }),
    ],
  ])('answers 400 message_invalid to %s and records the rejection', async (_name, attempt) => {
    const res = await attempt();
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'message_invalid', detail: expect.any(String) });
    expect((await get('/sandbox/stats')).body.rejected.invalid).toBe(1);
    expect((await get('/sandbox/rejections?account=acc')).body.items).toMatchObject([{ account: 'acc', reason: 'invalid', status: 400 }]);
    expect((await get('/sandbox/messages')).body.items).toEqual([]);
  });

  it('answers 429 flood_wait at the account pace and lets the next one through once it is due', async () => {
    await put('/sandbox/accounts/acc', { maxPerMinute: 20 });
    expect((await send('acc', textTo('c1'))).status).toBe(200);
    now += 1_000;
    expect(await send('acc', textTo('c2'))).toMatchObject({ status: 429, body: { error: 'flood_wait', retryAfterSeconds: 2 } });
    now += 2_000;
    expect((await send('acc', textTo('c2'))).status).toBe(200);
    expect((await get('/sandbox/accounts/acc/sends')).body).toEqual({ times: [T0, T0 + 3_000] });
    expect((await get('/sandbox/stats')).body).toMatchObject({
      accepted: 2,
      rejected: { flood_wait: 1 },
      accounts: [{ account: 'acc', accepted: 2, maxPerSecond: 1 }],
    });
  });

  it('answers 429 slow_mode for a chat in slow mode only', async () => {
    await put('/sandbox/chats/acc/slow', { slowModeSeconds: 30 });
    await send('acc', textTo('slow'));
    await send('acc', textTo('other'));
    now += 10_000;
    expect(await send('acc', textTo('slow'))).toMatchObject({ status: 429, body: { error: 'slow_mode', retryAfterSeconds: 20 } });
    expect((await send('acc', textTo('other'))).status).toBe(200);
  });

  it('answers a forced flood wait once in full, then with the time left', async () => {
    await put('/sandbox/accounts/acc', { floodWaitSeconds: 60 });
    expect((await send('acc', textTo('c1'))).body).toEqual({ error: 'flood_wait', retryAfterSeconds: 60 });
    now += 45_000;
    expect((await send('acc', textTo('c2'))).body).toEqual({ error: 'flood_wait', retryAfterSeconds: 15 });
    now += 15_000;
    expect((await send('acc', textTo('c2'))).status).toBe(200);
  });

  it('answers 401 account_unauthorized', async () => {
    expect((await put('/sandbox/accounts/acc', { unauthorized: true })).body).toMatchObject({ account: 'acc', unauthorized: true });
    expect(await send('acc', textTo('c1'))).toMatchObject({ status: 401, body: { error: 'account_unauthorized' } });
    expect((await get('/sandbox/stats')).body.rejected.unauthorized).toBe(1);
  });

  it.each([
    ['chat_not_found', 404],
    ['forbidden', 403],
    ['message_invalid', 400],
  ])('answers a chat set to %s with %i', async (error, status) => {
    await put('/sandbox/chats/acc/c1', { error });
    expect(await send('acc', textTo('c1'))).toMatchObject({ status, body: { error } });
    expect((await get('/sandbox/stats')).body.rejected.chat_error).toBe(1);
  });

  it('answers 500 to the next failNext sends, then accepts', async () => {
    expect((await put('/sandbox/chats/acc/c1', { failNext: 2 })).body).toMatchObject({ failNext: 2 });
    expect((await send('acc', textTo('c1'), 'k')).status).toBe(500);
    expect((await send('acc', textTo('c1'), 'k')).body).toEqual({ error: 'internal_error', detail: 'failNext' });
    expect((await send('acc', textTo('c1'), 'k')).status).toBe(200);
    expect((await get('/sandbox/stats')).body).toMatchObject({ rejected: { fault: 2 }, duplicateKeys: 0 });
  });

  it('answers 500 at the configured fault rate', async () => {
    await put('/sandbox/config', { faultRate: 1 });
    expect(await send('acc', textTo('c1'))).toMatchObject({ status: 500, body: { error: 'internal_error' } });
  });

  it('waits latencyMs before every answer and a chat’s hangNextMs once', async () => {
    await put('/sandbox/config', { latencyMs: 25 });
    await put('/sandbox/chats/acc/c1', { hangNextMs: 20_000 });
    await send('acc', textTo('c1'));
    await send('acc', textTo('c1'));
    await upload('acc', Buffer.from('x'));
    expect(slept).toEqual([20_025, 25, 25]);
  });

  it('records when it answered each accepted message, after the latency and a hang', async () => {
    await app.close();
    now = T0;
    // a clock that the sleeps move on, so answers come later than receipts as they would for real
    app = await buildSandbox({ config: { limits: { ...open, latencyMs: 40 }, seed: 1 }, clock: () => now, sleep: async (ms) => void (now += ms) });
    await put('/sandbox/chats/acc/c2', { hangNextMs: 1_000 });
    await send('acc', textTo('c1'));
    await send('acc', textTo('c2'));
    await send('acc', textTo('c1', 'again'), 'run:c1:1');
    await send('acc', textTo('c1', 'again'), 'run:c1:1');
    expect((await get('/sandbox/messages')).body.items.map((m: { receivedAt: number; answeredAt: number }) => [m.receivedAt, m.answeredAt])).toEqual([
      [T0, T0 + 40],
      [T0 + 40, T0 + 1_080],
      [T0 + 1_080, T0 + 1_120],
    ]);
  });

  it('accepts a percent-encoded Idempotency-Key of the longest chat id and deduplicates by it', async () => {
    const key = `run:${'%E7%BE%A4'.repeat(256)}:0`;
    expect((await send('acc', textTo('群'.repeat(256)), key)).status).toBe(200);
    expect((await send('acc', textTo('群'.repeat(256)), key)).body).toEqual({ messageId: 'msg-1' });
    expect((await get('/sandbox/messages')).body.items).toMatchObject([{ chatId: '群'.repeat(256), idempotencyKey: key }]);
    expect((await get('/sandbox/stats')).body.duplicateKeys).toBe(1);
  });
});

describe('platform: media', () => {
  beforeEach(() => start());
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);

  it('stores an upload, counts it per account and sha256, and accepts its ref in a message', async () => {
    const first = await upload('acc', png);
    expect(first).toMatchObject({ status: 200, body: { mediaRef: expect.stringMatching(/^m-/) } });
    await upload('acc', png);
    const ref = first.body.mediaRef as string;
    expect((await get(`/sandbox/media/${ref}`)).body).toEqual({
      mediaRef: ref,
      sha256: sha(png),
      contentType: 'image/png',
      size: png.length,
      account: 'acc',
      uploadedAt: T0,
    });
    expect((await get('/sandbox/stats')).body.uploads).toEqual([{ account: 'acc', sha256: sha(png), count: 2 }]);
    const res = await send('acc', { chatId: 'c1', part: { type: 'media', mediaRef: ref, caption: 'see' }, partIndex: 0, partCount: 1 });
    expect(res.status).toBe(200);
  });

  it('keeps a JSON upload as raw bytes', async () => {
    const json = Buffer.from('{"a": 1}');
    expect((await upload('acc', json, 'application/json')).status).toBe(200);
  });

  it('answers 400 to a missing or wrong X-Media-Sha256 and 401 to an unauthorized account', async () => {
    expect(await upload('acc', png, 'image/png', null)).toMatchObject({ status: 400, body: { error: 'message_invalid' } });
    expect(await upload('acc', png, 'image/png', sha(Buffer.from('other')))).toMatchObject({ status: 400, body: { error: 'message_invalid' } });
    await put('/sandbox/accounts/acc', { unauthorized: true });
    expect(await upload('acc', png)).toMatchObject({ status: 401, body: { error: 'account_unauthorized' } });
    expect((await get('/sandbox/stats')).body.uploads).toEqual([]);
  });

  it('answers 400 to a body over 64 MiB', async () => {
    const huge = Buffer.alloc(64 * 1024 * 1024 + 1);
    expect(await upload('acc', huge)).toMatchObject({ status: 400, body: { error: 'message_invalid' } });
  });

  const mediaTo = (mediaRef: string) => ({ chatId: 'c1', part: { type: 'media', mediaRef }, partIndex: 0, partCount: 1 });

  it('answers 400 media_ref_invalid with a detail to a message naming an unknown, foreign or expired ref', async () => {
    const ref = (await upload('acc', png)).body.mediaRef as string;
    expect(await send('acc', mediaTo('m-nope'))).toMatchObject({ status: 400, body: { error: 'media_ref_invalid', detail: 'unknown mediaRef' } });
    expect(await send('other', mediaTo(ref))).toMatchObject({
      status: 400,
      body: { error: 'media_ref_invalid', detail: 'mediaRef belongs to another account' },
    });
    now += 24 * 3_600_000;
    expect(await send('acc', mediaTo(ref))).toMatchObject({ status: 400, body: { error: 'media_ref_invalid', detail: 'mediaRef expired' } });
    expect((await get('/sandbox/media/m-nope')).status).toBe(404);
    expect((await get('/sandbox/messages')).body.items).toEqual([]);
  });

  it('DELETE /sandbox/media forgets every ref, as a restarted platform would; a new upload works', async () => {
    const ref = (await upload('acc', png)).body.mediaRef as string;
    expect((await send('acc', mediaTo(ref))).status).toBe(200);
    expect(await call({ method: 'DELETE', url: '/sandbox/media' })).toMatchObject({ status: 200, body: { forgotten: 1 } });
    expect((await get(`/sandbox/media/${ref}`)).status).toBe(404);
    expect(await send('acc', mediaTo(ref))).toMatchObject({ status: 400, body: { error: 'media_ref_invalid' } });
    const again = (await upload('acc', png)).body.mediaRef as string;
    expect((await send('acc', mediaTo(again))).status).toBe(200);
    expect((await get('/sandbox/messages')).body.items).toHaveLength(2);
  });
});

describe('control API', () => {
  beforeEach(() => start({ maxPerMinute: 120 }));

  it('reads and partially updates the default limits, refusing unknown or out-of-range settings', async () => {
    expect((await get('/sandbox/config')).body).toEqual({ ...open, maxPerMinute: 120, seed: 1 });
    expect((await put('/sandbox/config', { slowModeSeconds: 2, burst: 3 })).body).toEqual({
      ...open,
      maxPerMinute: 120,
      slowModeSeconds: 2,
      burst: 3,
      seed: 1,
    });
    expect(await put('/sandbox/config', { maxPerMinut: 1 })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(await put('/sandbox/config', { faultRate: 2 })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect((await get('/sandbox/config')).body.faultRate).toBe(0);
  });

  it('configures accounts and chats, validating the settings', async () => {
    expect((await put('/sandbox/accounts/acc', { maxPerMinute: 6, burst: 2 })).body).toMatchObject({ account: 'acc', maxPerMinute: 6, burst: 2 });
    expect((await put('/sandbox/accounts/acc', { maxPerMinute: null })).body).toMatchObject({ maxPerMinute: 120, burst: 2 });
    expect(await put('/sandbox/accounts/acc', { unauthorized: 'yes' })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(await put('/sandbox/chats/acc/c1', { error: 'gone' })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect((await put('/sandbox/chats/acc/c1', { error: 'forbidden', slowModeSeconds: 5 })).body).toEqual({
      account: 'acc',
      chatId: 'c1',
      error: 'forbidden',
      slowModeSeconds: 5,
      failNext: 0,
      hangNextMs: 0,
      received: 0,
    });
    expect((await get('/sandbox/accounts')).body.items).toMatchObject([{ account: 'acc', chats: 1 }]);
    expect((await get('/sandbox/chats/acc/never')).body).toEqual({ account: 'acc', chatId: 'never', settings: null, items: [] });
    const longId = 'g'.repeat(200);
    expect((await send(longId, textTo(longId))).status).toBe(200);
    expect((await get(`/sandbox/chats/${longId}/${longId}`)).body.items).toHaveLength(1);
  });

  it('lists messages in order of receipt, filtered by account and chat', async () => {
    await send('a', textTo('x', '1'));
    await send('b', textTo('x', '2'));
    now += 1_000;
    await send('a', textTo('y', '3'));
    const texts = async (q: string) => ((await get(`/sandbox/messages${q}`)).body.items as { part: { text: string } }[]).map((m) => m.part.text);
    expect(await texts('')).toEqual(['1', '2', '3']);
    expect(await texts('?account=a')).toEqual(['1', '3']);
    expect(await texts('?chat=x')).toEqual(['1', '2']);
    expect(await texts('?account=a&chat=y')).toEqual(['3']);
  });

  it('resets to the start-up config with nothing recorded', async () => {
    await put('/sandbox/config', { maxPerMinute: 0 });
    await send('acc', textTo('c1'));
    await put('/sandbox/accounts/acc', { unauthorized: true });
    const reset = await call({ method: 'POST', url: '/sandbox/reset', headers: { 'content-type': 'application/json' } });
    expect(reset).toMatchObject({ status: 200, body: { ok: true } });
    expect((await get('/sandbox/config')).body.maxPerMinute).toBe(120);
    expect((await get('/sandbox/stats')).body).toMatchObject({ accepted: 0, accounts: [], uploads: [] });
    expect((await send('acc', textTo('c1'))).status).toBe(200);
  });

  it('answers healthz, 404 for unknown routes, and renders the page with escaped text', async () => {
    expect((await get('/healthz')).body).toEqual({ ok: true });
    expect(await get('/nope')).toMatchObject({ status: 404, body: { error: 'not_found' } });
    await send('acc', textTo('chat<1>', '<script>alert(1)</script>'));
    const page = await get('/');
    expect(page.raw.headers['content-type']).toMatch(/^text\/html/);
    expect(page.raw.body).toContain('http-equiv="refresh" content="2"');
    expect(page.raw.body).toContain('chat&lt;1&gt;');
    expect(page.raw.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.raw.body).not.toContain('<script>');
  });
});

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
    now += 1_000;
    expect((await send('acc', textTo('b'))).status).toBe(200);
    now += 1_000;
    expect(await send('acc', textTo('c'))).toMatchObject({ status: 401, body: { error: 'account_unauthorized' } });
    // a ban is for good: an hour later the account is still closed
    now += 3_600_000;
    expect(await send('acc', textTo('d'))).toMatchObject({ status: 401, body: { error: 'account_unauthorized' } });
    expect(await banned('acc')).toEqual({ at: T0 + 2_000, reason: 'a send beyond 2 in one hour' });
    expect((await call({ method: 'GET', url: '/sandbox/stats' })).body).toMatchObject({ accepted: 2, rejected: { banned: 1, unauthorized: 1 } });
    // other accounts are untouched
    expect((await send('other', textTo('a'))).status).toBe(200);
  });

  it('bans on the minimum gap, set for every account by the config (SANDBOX_BAN_MIN_GAP_MS)', async () => {
    await start({ banMinGapMs: 1_500 });
    expect((await send('acc', textTo('a'))).status).toBe(200);
    now += 1_500;
    expect((await send('acc', textTo('b'))).status).toBe(200);
    now += 1_499;
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
