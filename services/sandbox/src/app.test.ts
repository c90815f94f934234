import { T0, open, time, start, stop, call, send, textTo, upload, put, get } from './app.fixture.js';

afterEach(() => stop());

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
    time.now += 1_000;
    expect(await send('acc', textTo('c2'))).toMatchObject({ status: 429, body: { error: 'flood_wait', retryAfterSeconds: 2 } });
    time.now += 2_000;
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
    time.now += 10_000;
    expect(await send('acc', textTo('slow'))).toMatchObject({ status: 429, body: { error: 'slow_mode', retryAfterSeconds: 20 } });
    expect((await send('acc', textTo('other'))).status).toBe(200);
  });

  it('answers a forced flood wait once in full, then with the time left', async () => {
    await put('/sandbox/accounts/acc', { floodWaitSeconds: 60 });
    expect((await send('acc', textTo('c1'))).body).toEqual({ error: 'flood_wait', retryAfterSeconds: 60 });
    time.now += 45_000;
    expect((await send('acc', textTo('c2'))).body).toEqual({ error: 'flood_wait', retryAfterSeconds: 15 });
    time.now += 15_000;
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
    expect(time.slept).toEqual([20_025, 25, 25]);
  });

  it('records when it answered each accepted message, after the latency and a hang', async () => {
    // a clock that the sleeps move on, so answers come later than receipts as they would for real
    await start({ latencyMs: 40 }, true);
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
    time.now += 1_000;
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
