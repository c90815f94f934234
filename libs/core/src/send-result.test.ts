import { classifyHttpAnswer, classifyTransportFailure, MEDIA_REF_INVALID, REQUEST_INVALID } from './send-result.js';
import { retryDelayMs } from './backoff.js';
import { finishedStatus, statusAtWindowClose, windowClosedSummary, notificationFor } from './run-state.js';
import { open, seal, hashToken, sameDigest } from './secrets.js';
import { randomBytes } from 'node:crypto';

describe('classifyHttpAnswer (CONTRACT §5)', () => {
  test.each([
    [200, { messageId: 'm1' }, { kind: 'delivered', messageId: 'm1' }],
    [429, { error: 'flood_wait', retryAfterSeconds: 30 }, { kind: 'account-wait', retryAfterMs: 30_000, code: 'flood_wait' }],
    [429, { error: 'slow_mode', retryAfterSeconds: 10 }, { kind: 'chat-wait', retryAfterMs: 10_000, code: 'slow_mode' }],
    [401, { error: 'account_unauthorized' }, { kind: 'account-unavailable', code: 'account_unauthorized', message: 'platform answered 401' }],
    [404, { error: 'chat_not_found' }, { kind: 'rejected', code: 'chat_not_found', message: 'platform answered 404' }],
    [403, { error: 'forbidden' }, { kind: 'rejected', code: 'forbidden', message: 'platform answered 403' }],
    [400, { error: 'message_invalid' }, { kind: 'rejected', code: 'message_invalid', message: 'platform answered 400' }],
    [400, { error: 'media_ref_invalid' }, { kind: 'rejected', code: MEDIA_REF_INVALID, message: 'platform answered 400' }],
    [500, null, { kind: 'retriable', code: 'http_500', message: 'platform answered 500' }],
    [503, { error: 'unavailable' }, { kind: 'retriable', code: 'unavailable', message: 'platform answered 503' }],
  ])('%i %j', (status, body, expected) => {
    expect(classifyHttpAnswer(status, body)).toEqual(expected);
  });
});

describe('classifyTransportFailure', () => {
  test('refused before anything was written: retry', () => {
    expect(classifyTransportFailure('ECONNREFUSED', false, 'refused').kind).toBe('retriable');
  });
  test('timeout after the request was written: unknown, never re-sent', () => {
    expect(classifyTransportFailure('timeout', true, 'slow')).toEqual({ kind: 'ambiguous', code: 'timeout', message: 'slow' });
  });
  test('reset after the write: unknown', () => {
    expect(classifyTransportFailure('ECONNRESET', true, 'reset').kind).toBe('ambiguous');
  });
  test('reset before the write: retry', () => {
    expect(classifyTransportFailure('ECONNRESET', false, 'reset').kind).toBe('retriable');
  });
  test('a timeout before the write: retry, never unknown', () => {
    expect(classifyTransportFailure('timeout', false, 'slow').kind).toBe('retriable');
  });
  test.each(['ERR_INVALID_CHAR', 'ERR_HTTP_INVALID_HEADER_VALUE', 'ERR_INVALID_HTTP_TOKEN', 'ERR_UNESCAPED_CHARACTERS', 'ERR_INVALID_URL'])(
    'a request node would not build (%s): a failure, neither a retry nor unknown',
    (code) => {
      expect(classifyTransportFailure(code, false, 'refused')).toEqual({ kind: 'rejected', code: REQUEST_INVALID, message: 'refused' });
    },
  );
  test('any other failure before the write, with or without a code: retry', () => {
    expect(classifyTransportFailure(undefined, false, 'x').kind).toBe('retriable');
    expect(classifyTransportFailure('request_not_built', false, 'x').kind).toBe('retriable');
  });
});

describe('retryDelayMs', () => {
  test('grows exponentially with bounded jitter', () => {
    expect(retryDelayMs(1, () => 0)).toBe(500);
    expect(retryDelayMs(1, () => 1)).toBe(1000);
    expect(retryDelayMs(3, () => 0)).toBe(2000);
    expect(retryDelayMs(30, () => 1)).toBe(300_000);
  });
});

describe('run state', () => {
  const counts = (sent: number, failed: number, total = 10) => ({ total, pending: total - sent - failed, inFlight: 0, sent, failed, skipped: 0, unknown: 0 });
  test('finished status', () => {
    expect(finishedStatus(counts(10, 0))).toBe('success');
    expect(finishedStatus(counts(4, 6))).toBe('partial');
    expect(finishedStatus(counts(0, 10))).toBe('failed');
  });
  test('window close before any attempt fails the run; after one it pauses', () => {
    expect(statusAtWindowClose(counts(0, 0), false)).toBe('failed');
    expect(statusAtWindowClose(counts(0, 0), true)).toBe('paused');
    expect(statusAtWindowClose(counts(3, 0), true)).toBe('paused');
  });
  test('summary wording (CONTRACT §3)', () => {
    expect(windowClosedSummary({ total: 1000, pending: 588, inFlight: 0, sent: 412, failed: 0, skipped: 0, unknown: 0 }, '18:00', 'Asia/Kuala_Lumpur')).toBe(
      'Delivery window closed at 18:00 (Asia/Kuala_Lumpur). 412 of 1000 groups delivered, 588 still pending. Resume from the Activity tab. If this happens repeatedly, consider offloading to another paired account, or shrinking the message body / media size to fit more groups in your daily window.',
    );
  });
  test('paused notification', () => {
    expect(notificationFor('paused', counts(3, 0), 'x')).toEqual({ title: 'Reminder paused', body: '3 of 10 groups delivered. Resume from the Activity tab.' });
  });
});

describe('secrets', () => {
  test('seal/open round trip, and a rotated key still opens old secrets', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const sealed = seal('{"botToken":"123:abc"}', oldKey);
    expect(sealed.toString('utf8')).not.toContain('123:abc');
    expect(open(sealed, [newKey, oldKey]).toString()).toBe('{"botToken":"123:abc"}');
    expect(() => open(sealed, [newKey])).toThrow('not configured');
  });
  test('tampering is detected', () => {
    const key = randomBytes(32);
    const sealed = seal('secret', key);
    sealed[sealed.length - 1]! ^= 1;
    expect(() => open(sealed, [key])).toThrow();
  });
  test('token digests compare', () => {
    expect(sameDigest(hashToken('a'), hashToken('a'))).toBe(true);
    expect(sameDigest(hashToken('a'), hashToken('b'))).toBe(false);
  });
});
