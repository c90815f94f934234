import type { Limits } from './limits.js';
import { MEDIA_REF_TTL_MS, SandboxState } from './state.js';
import type { Part, SendRequest } from './platform-types.js';

const open: Limits = { latencyMs: 0, maxPerMinute: 0, burst: 1, slowModeSeconds: 0, faultRate: 0, banHourlyCap: 0, banDailyCap: 0, banMinGapMs: 0 };
const T0 = 1_700_000_000_000;

let refs = 0;
const newState = (limits: Partial<Limits> = {}, seed = 1) => new SandboxState({ ...open, ...limits }, seed, () => `ref-${++refs}`);

let keys = 0;
const text = (text = 'hello'): Part => ({ type: 'text', text });
const req = (over: Partial<SendRequest> = {}): SendRequest => ({
  account: 'acc',
  chatId: 'chat-1',
  idempotencyKey: `run:key-${++keys}`,
  partIndex: 0,
  partCount: 1,
  part: text(),
  ...over,
});

describe('accepting messages', () => {
  it('records each accepted part with its receipt time, in order', () => {
    const s = newState();
    expect(s.send(req({ partIndex: 0, partCount: 2, part: text('a') }), T0)).toEqual({ status: 200, body: { messageId: 'msg-1' }, hangMs: 0, seq: 1 });
    expect(s.send(req({ partIndex: 1, partCount: 2, part: text('b') }), T0 + 5).status).toBe(200);
    const items = s.messages({ account: 'acc', chat: 'chat-1' });
    expect(items.map((m) => [m.seq, m.partIndex, m.part, m.receivedAt])).toEqual([
      [1, 0, text('a'), T0],
      [2, 1, text('b'), T0 + 5],
    ]);
    expect(s.stats()).toMatchObject({ accepted: 2, duplicateKeys: 0, accounts: [{ account: 'acc', accepted: 2, maxPerSecond: 2 }] });
    expect(s.sendTimes('acc')).toEqual([T0, T0 + 5]);
  });

  it('stamps answeredAt when the answer is written, once, and leaves receivedAt as it was', () => {
    const s = newState();
    const first = s.send(req(), T0);
    s.send(req(), T0 + 1);
    expect(s.messages().map((m) => m.answeredAt)).toEqual([null, null]);
    s.answered(first.seq!, T0 + 250);
    s.answered(first.seq!, T0 + 900);
    expect(s.messages().map((m) => [m.receivedAt, m.answeredAt])).toEqual([
      [T0, T0 + 250],
      [T0 + 1, null],
    ]);
  });

  it('filters messages by account and chat', () => {
    const s = newState();
    s.send(req({ account: 'a', chatId: 'x' }), T0);
    s.send(req({ account: 'b', chatId: 'x' }), T0);
    s.send(req({ account: 'a', chatId: 'y' }), T0);
    expect(s.messages({ account: 'a' }).map((m) => m.chatId)).toEqual(['x', 'y']);
    expect(s.messages({ chat: 'x' }).map((m) => m.account)).toEqual(['a', 'b']);
    expect(s.messages()).toHaveLength(3);
  });
});

describe('idempotency', () => {
  it('answers a repeated key with the same messageId, records nothing new and counts the duplicate', () => {
    const s = newState();
    const first = s.send(req({ idempotencyKey: 'r1:c1:0' }), T0);
    const again = s.send(req({ idempotencyKey: 'r1:c1:0' }), T0 + 1_000);
    expect(again.body).toEqual(first.body);
    expect(s.messages()).toHaveLength(1);
    expect(s.stats().duplicateKeys).toBe(1);
    expect(s.duplicateKeys()).toEqual([{ at: T0 + 1_000, account: 'acc', chatId: 'chat-1', idempotencyKey: 'r1:c1:0', messageId: 'msg-1' }]);
  });

  it('with deduplication switched off, a repeated key is delivered again: a real duplicate', () => {
    const s = newState();
    expect(s.configureAccount('acc', { deduplicates: false })).toMatchObject({ deduplicates: false });
    const first = s.send(req({ idempotencyKey: 'r1:c1:0' }), T0);
    const again = s.send(req({ idempotencyKey: 'r1:c1:0' }), T0 + 60_000);
    expect(again.body).not.toEqual(first.body);
    expect(s.messages()).toHaveLength(2);
    expect(s.stats().duplicateKeys).toBe(0);
  });

  it('does not count a retry of a rejected send as a duplicate', () => {
    const s = newState();
    s.configureChat('acc', 'chat-1', { failNext: 1 });
    expect(s.send(req({ idempotencyKey: 'k' }), T0).status).toBe(500);
    expect(s.send(req({ idempotencyKey: 'k' }), T0 + 1).status).toBe(200);
    expect(s.stats().duplicateKeys).toBe(0);
  });

  it('scopes keys to the account', () => {
    const s = newState();
    s.send(req({ account: 'a', idempotencyKey: 'k' }), T0);
    expect(s.send(req({ account: 'b', idempotencyKey: 'k' }), T0).body).toEqual({ messageId: 'msg-2' });
    expect(s.stats().duplicateKeys).toBe(0);
  });
});

describe('per-account pace', () => {
  it('answers flood_wait with the whole seconds left, and only accepted sends advance the pace', () => {
    const s = newState({ maxPerMinute: 30 });
    expect(s.send(req(), T0).status).toBe(200);
    expect(s.send(req({ chatId: 'other' }), T0 + 500)).toEqual({ status: 429, body: { error: 'flood_wait', retryAfterSeconds: 2 }, hangMs: 0 });
    expect(s.send(req(), T0 + 1_999).body).toEqual({ error: 'flood_wait', retryAfterSeconds: 1 });
    expect(s.send(req(), T0 + 2_000).status).toBe(200);
    expect(s.stats().rejected.flood_wait).toBe(2);
    expect(s.rejections({ account: 'acc' }).map((r) => [r.at, r.chatId, r.retryAfterSeconds])).toEqual([
      [T0 + 500, 'other', 2],
      [T0 + 1_999, 'chat-1', 1],
    ]);
  });

  it('lets a burst through back to back', () => {
    const s = newState({ maxPerMinute: 60, burst: 3 });
    expect([1, 2, 3, 4].map(() => s.send(req(), T0).status)).toEqual([200, 200, 200, 429]);
    expect(s.stats().accounts[0]?.maxPerSecond).toBe(3);
  });

  it('is per account, and an account override beats the default', () => {
    const s = newState({ maxPerMinute: 60 });
    s.configureAccount('fast', { maxPerMinute: 600 });
    expect(s.send(req({ account: 'slow' }), T0).status).toBe(200);
    expect(s.send(req({ account: 'slow' }), T0 + 100).status).toBe(429);
    expect(s.send(req({ account: 'fast' }), T0).status).toBe(200);
    expect(s.send(req({ account: 'fast' }), T0 + 100).status).toBe(200);
    s.configureAccount('fast', { maxPerMinute: null });
    expect(s.send(req({ account: 'fast' }), T0 + 200).status).toBe(429);
  });

  it('is unlimited at 0', () => {
    const s = newState();
    expect(Array.from({ length: 50 }, () => s.send(req(), T0).status).every((x) => x === 200)).toBe(true);
  });
});

describe('slow mode', () => {
  it('rejects a chat receiving again too soon, leaving other chats alone', () => {
    const s = newState({ slowModeSeconds: 10 });
    expect(s.send(req({ chatId: 'a' }), T0).status).toBe(200);
    expect(s.send(req({ chatId: 'a' }), T0 + 3_000)).toEqual({ status: 429, body: { error: 'slow_mode', retryAfterSeconds: 7 }, hangMs: 0 });
    expect(s.send(req({ chatId: 'b' }), T0 + 3_000).status).toBe(200);
    expect(s.send(req({ chatId: 'a' }), T0 + 10_000).status).toBe(200);
    expect(s.stats().rejected.slow_mode).toBe(1);
  });

  it('takes the chat setting over the account setting over the default', () => {
    const s = newState({ slowModeSeconds: 10 });
    s.configureAccount('acc', { slowModeSeconds: 5 });
    s.configureChat('acc', 'quick', { slowModeSeconds: 0 });
    s.send(req({ chatId: 'quick' }), T0);
    s.send(req({ chatId: 'normal' }), T0);
    s.send(req({ account: 'other', chatId: 'normal' }), T0);
    expect(s.send(req({ chatId: 'quick' }), T0 + 1).status).toBe(200);
    expect(s.send(req({ chatId: 'normal' }), T0 + 5_000).status).toBe(200);
    expect(s.send(req({ account: 'other', chatId: 'normal' }), T0 + 5_000).body).toEqual({ error: 'slow_mode', retryAfterSeconds: 5 });
  });
});

describe('forced flood wait', () => {
  it('answers N once, then the remaining seconds on any chat until it ends; other accounts go on', () => {
    const s = newState();
    s.configureAccount('acc', { floodWaitSeconds: 30 });
    expect(s.send(req({ chatId: 'a' }), T0).body).toEqual({ error: 'flood_wait', retryAfterSeconds: 30 });
    expect(s.send(req({ chatId: 'b' }), T0 + 10_000).body).toEqual({ error: 'flood_wait', retryAfterSeconds: 20 });
    expect(s.send(req({ account: 'other' }), T0 + 10_000).status).toBe(200);
    expect(s.send(req({ chatId: 'b' }), T0 + 29_500).body).toEqual({ error: 'flood_wait', retryAfterSeconds: 1 });
    expect(s.send(req({ chatId: 'b' }), T0 + 30_000).status).toBe(200);
    expect(s.accountViews().find((a) => a.account === 'acc')).toMatchObject({ pendingFloodWaitSeconds: null, blockedUntil: T0 + 30_000 });
  });

  it('is lifted by null', () => {
    const s = newState();
    s.configureAccount('acc', { floodWaitSeconds: 30 });
    s.send(req(), T0);
    s.configureAccount('acc', { floodWaitSeconds: null });
    expect(s.send(req(), T0 + 1).status).toBe(200);
  });
});

describe('account and chat errors', () => {
  it('answers 401 to an unauthorized account, for sends and uploads', () => {
    const s = newState();
    s.configureAccount('acc', { unauthorized: true });
    expect(s.send(req(), T0)).toEqual({ status: 401, body: { error: 'account_unauthorized' }, hangMs: 0 });
    expect(s.upload({ account: 'acc', declaredSha256: 'ab', sha256: 'ab', contentType: 'image/png', size: 1 }, T0).status).toBe(401);
    expect(s.stats().rejected.unauthorized).toBe(2);
    s.configureAccount('acc', { unauthorized: false });
    expect(s.send(req(), T0).status).toBe(200);
  });

  it.each([
    ['chat_not_found', 404],
    ['forbidden', 403],
    ['message_invalid', 400],
  ] as const)('answers a chat set to %s with %i until cleared', (error, status) => {
    const s = newState();
    s.configureChat('acc', 'chat-1', { error });
    expect(s.send(req(), T0)).toEqual({ status, body: { error }, hangMs: 0 });
    expect(s.send(req({ chatId: 'chat-2' }), T0).status).toBe(200);
    expect(s.stats().rejected.chat_error).toBe(1);
    s.configureChat('acc', 'chat-1', { error: null });
    expect(s.send(req(), T0).status).toBe(200);
  });

  it('fails the next N sends to a chat with 500', () => {
    const s = newState();
    s.configureChat('acc', 'chat-1', { failNext: 2 });
    expect([1, 2, 3].map(() => s.send(req(), T0).status)).toEqual([500, 500, 200]);
    expect(s.stats().rejected.fault).toBe(2);
  });

  it('hangs only the next send to a chat', () => {
    const s = newState();
    s.configureChat('acc', 'chat-1', { hangNextMs: 20_000 });
    expect(s.chatSettings('acc', 'chat-1')?.hangNextMs).toBe(20_000);
    const hung = s.send(req(), T0);
    expect(hung).toMatchObject({ status: 200, hangMs: 20_000 });
    expect(s.send(req(), T0).hangMs).toBe(0);
  });

  it('draws random faults from the seed, the same sequence each time', () => {
    const run = (seed: number) => {
      const s = newState({ faultRate: 0.5 }, seed);
      return Array.from({ length: 40 }, () => s.send(req(), T0).status);
    };
    const a = run(7);
    expect(run(7)).toEqual(a);
    expect(a).toContain(500);
    expect(a).toContain(200);
    expect(run(8)).not.toEqual(a);
  });

  it('always faults at rate 1', () => {
    const s = newState({ faultRate: 1 });
    expect(s.send(req(), T0)).toEqual({ status: 500, body: { error: 'internal_error', detail: 'random fault' }, hangMs: 0 });
    expect(s.messages()).toHaveLength(0);
  });
});

describe('media', () => {
  const upload = (s: SandboxState, account: string, now: number, sha = 'aa11') =>
    s.upload({ account, declaredSha256: sha, sha256: sha, contentType: 'image/png', size: 3 }, now);
  const media = (mediaRef: string): Part => ({ type: 'media', mediaRef, caption: 'look' });

  it('stores the upload and counts uploads per account and sha256', () => {
    const s = newState();
    const first = upload(s, 'acc', T0);
    expect(first).toEqual({ status: 200, body: { mediaRef: `ref-${refs}` }, hangMs: 0 });
    upload(s, 'acc', T0);
    upload(s, 'other', T0);
    expect(s.stats().uploads).toEqual([
      { account: 'acc', sha256: 'aa11', count: 2 },
      { account: 'other', sha256: 'aa11', count: 1 },
    ]);
    const ref = (first.body as { mediaRef: string }).mediaRef;
    expect(s.mediaRecord(ref)).toEqual({ mediaRef: ref, sha256: 'aa11', contentType: 'image/png', size: 3, account: 'acc', uploadedAt: T0 });
  });

  it('rejects an upload whose declared sha256 is missing or wrong', () => {
    const s = newState();
    expect(s.upload({ account: 'acc', declaredSha256: 'bb', sha256: 'aa', contentType: 'x/y', size: 1 }, T0).body).toEqual({
      error: 'message_invalid',
      detail: 'X-Media-Sha256 does not match the body',
    });
    expect(s.upload({ account: 'acc', declaredSha256: undefined, sha256: 'aa', contentType: 'x/y', size: 1 }, T0).status).toBe(400);
    expect(s.upload({ account: 'acc', declaredSha256: 'AA', sha256: 'aa', contentType: 'x/y', size: 1 }, T0).status).toBe(200);
    expect(s.stats().uploads).toEqual([{ account: 'acc', sha256: 'aa', count: 1 }]);
  });

  it('accepts a ref of the same account until it is 24 h old', () => {
    const s = newState();
    const ref = (upload(s, 'acc', T0).body as { mediaRef: string }).mediaRef;
    expect(s.send(req({ part: media(ref) }), T0 + MEDIA_REF_TTL_MS - 1).status).toBe(200);
    expect(s.send(req({ part: media(ref) }), T0 + MEDIA_REF_TTL_MS)).toEqual({
      status: 400,
      body: { error: 'media_ref_invalid', detail: 'mediaRef expired' },
      hangMs: 0,
    });
  });

  it('answers 400 media_ref_invalid to an unknown ref and to another account’s ref', () => {
    const s = newState();
    const ref = (upload(s, 'acc', T0).body as { mediaRef: string }).mediaRef;
    expect(s.send(req({ part: media('nope') }), T0)).toMatchObject({ status: 400, body: { error: 'media_ref_invalid', detail: 'unknown mediaRef' } });
    expect(s.send(req({ account: 'other', part: media(ref) }), T0)).toMatchObject({
      status: 400,
      body: { error: 'media_ref_invalid', detail: 'mediaRef belongs to another account' },
    });
    expect(s.stats().rejected.invalid).toBe(2);
    expect(s.rejections().map((r) => r.error)).toEqual(['media_ref_invalid', 'media_ref_invalid']);
  });

  it('forgets every ref, as a restarted platform would, and accepts a new upload of the same media', () => {
    const s = newState();
    const ref = (upload(s, 'acc', T0).body as { mediaRef: string }).mediaRef;
    expect(s.forgetMedia()).toEqual({ forgotten: 1 });
    expect(s.mediaRecord(ref)).toBeUndefined();
    expect(s.send(req({ part: media(ref) }), T0)).toMatchObject({ status: 400, body: { error: 'media_ref_invalid' } });
    const again = (upload(s, 'acc', T0).body as { mediaRef: string }).mediaRef;
    expect(again).not.toBe(ref);
    expect(s.send(req({ part: media(again) }), T0).status).toBe(200);
    expect(s.stats().uploads).toEqual([{ account: 'acc', sha256: 'aa11', count: 2 }]);
  });
});

describe('config and reset', () => {
  it('updates the defaults in place and reset returns to the start-up ones with nothing recorded', () => {
    const s = newState({ maxPerMinute: 10 }, 3);
    expect(s.updateConfig({ maxPerMinute: 0, latencyMs: 50, seed: 9 })).toEqual({ ...open, maxPerMinute: 0, latencyMs: 50, seed: 9 });
    s.send(req(), T0);
    s.rejectInvalid({ account: 'acc' }, 'bad', T0);
    s.configureAccount('acc', { unauthorized: true });
    s.reset();
    expect(s.config()).toEqual({ ...open, maxPerMinute: 10, seed: 3 });
    expect(s.stats()).toEqual({
      accepted: 0,
      rejected: { flood_wait: 0, slow_mode: 0, unauthorized: 0, banned: 0, fault: 0, invalid: 0, chat_error: 0 },
      duplicateKeys: 0,
      uploads: [],
      accounts: [],
    });
    expect(s.messages()).toEqual([]);
    expect(s.rejections()).toEqual([]);
    expect(s.send(req(), T0).status).toBe(200);
  });
});
