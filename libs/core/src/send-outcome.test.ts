import type { SendResult } from './send-result.js';
import { decideSendOutcome, type SendOutcome, type SendOutcomeInput } from './send-outcome.js';

const NOW = Date.parse('2026-03-02T10:00:00Z');
const SEC = 1_000;
const MAX_RETRIES = 5;

const input = (i: Partial<SendOutcomeInput> = {}): SendOutcomeInput => ({
  attempts: 0,
  partIndex: 0,
  partCount: 1,
  now: NOW,
  firstPartStartedAt: NOW - 1_234.4,
  blockedUntil: 0,
  maxRetries: MAX_RETRIES,
  random: () => 0.5,
  ...i,
});

describe('decideSendOutcome', () => {
  it.each<[string, SendResult, Partial<SendOutcomeInput>, SendOutcome]>([
    // delivered
    [
      'the only part delivered: the chat is sent, latency from its first part',
      { kind: 'delivered', messageId: 'm1' },
      {},
      { kind: 'sent-last', messageId: 'm1', partsSent: 1, latencyMs: 1_234 },
    ],
    [
      'the last of three parts delivered: the chat is sent',
      { kind: 'delivered', messageId: 'm3' },
      { partIndex: 2, partCount: 3 },
      { kind: 'sent-last', messageId: 'm3', partsSent: 3, latencyMs: 1_234 },
    ],
    [
      'a part before the last delivered: the next part follows',
      { kind: 'delivered', messageId: 'm2' },
      { partIndex: 1, partCount: 3 },
      { kind: 'next-part', messageId: 'm2', partsSent: 2 },
    ],
    [
      'the first of two parts delivered: the next part follows',
      { kind: 'delivered', messageId: 'm1' },
      { partIndex: 0, partCount: 2 },
      { kind: 'next-part', messageId: 'm1', partsSent: 1 },
    ],
    // account wait
    [
      'a flood wait with no wait heard yet: a new flood wait, the account blocked to its end',
      { kind: 'account-wait', retryAfterMs: 30 * SEC, code: 'flood_wait' },
      {},
      { kind: 'account-wait', until: NOW + 30 * SEC, blockedUntil: NOW + 30 * SEC, floodWait: true, code: 'flood_wait', retryAfterMs: 30 * SEC },
    ],
    [
      'a flood wait inside a wait already heard: the same wait, the later end kept',
      { kind: 'account-wait', retryAfterMs: 10 * SEC, code: 'flood_wait' },
      { blockedUntil: NOW + 60 * SEC },
      { kind: 'account-wait', until: NOW + 10 * SEC, blockedUntil: NOW + 60 * SEC, floodWait: false, code: 'flood_wait', retryAfterMs: 10 * SEC },
    ],
    [
      'a flood wait just as the heard wait ends exactly now: a new flood wait',
      { kind: 'account-wait', retryAfterMs: 10 * SEC, code: 'flood_wait' },
      { blockedUntil: NOW },
      { kind: 'account-wait', until: NOW + 10 * SEC, blockedUntil: NOW + 10 * SEC, floodWait: true, code: 'flood_wait', retryAfterMs: 10 * SEC },
    ],
    [
      'an account wait that is no flood wait (a connection hand-over) is not counted',
      { kind: 'account-wait', retryAfterMs: 5 * SEC, code: 'socket_handover' },
      {},
      { kind: 'account-wait', until: NOW + 5 * SEC, blockedUntil: NOW + 5 * SEC, floodWait: false, code: 'socket_handover', retryAfterMs: 5 * SEC },
    ],
    // chat wait
    [
      'slow mode: only the chat waits',
      { kind: 'chat-wait', retryAfterMs: 20 * SEC, code: 'slow_mode' },
      {},
      { kind: 'chat-wait', until: NOW + 20 * SEC, code: 'slow_mode', retryAfterMs: 20 * SEC },
    ],
    [
      'a chat wait ending exactly now: the chat is due now',
      { kind: 'chat-wait', retryAfterMs: 0, code: 'slow_mode' },
      {},
      { kind: 'chat-wait', until: NOW, code: 'slow_mode', retryAfterMs: 0 },
    ],
    // account unavailable
    [
      'a logged-out account: the chat is due now, the account stops',
      { kind: 'account-unavailable', code: 'account_unauthorized', message: 'no' },
      { attempts: 3 },
      { kind: 'stop-account', releaseAt: NOW, code: 'account_unauthorized' },
    ],
    // rejected
    [
      'a refusal that suppresses the chat',
      { kind: 'rejected', code: 'bot_blocked', message: 'blocked' },
      {},
      { kind: 'fail', because: 'rejected', code: 'bot_blocked', message: 'blocked', suppress: true, attempts: 1 },
    ],
    [
      'chat_not_found suppresses the chat',
      { kind: 'rejected', code: 'chat_not_found', message: 'gone' },
      { attempts: 2 },
      { kind: 'fail', because: 'rejected', code: 'chat_not_found', message: 'gone', suppress: true, attempts: 3 },
    ],
    [
      'a refusal that does not suppress the chat',
      { kind: 'rejected', code: 'message_too_long', message: 'long' },
      {},
      { kind: 'fail', because: 'rejected', code: 'message_too_long', message: 'long', suppress: false, attempts: 1 },
    ],
    // retriable
    [
      'a first retriable failure: retried after the first back-off (1 s, half of it jitter)',
      { kind: 'retriable', code: 'http_503', message: 'down' },
      {},
      { kind: 'retry', at: NOW + 750, attempts: 1, code: 'http_503', message: 'down' },
    ],
    [
      'the attempt before the last: still retried, with a longer back-off (8 s at attempt 4)',
      { kind: 'retriable', code: 'http_503', message: 'down' },
      { attempts: MAX_RETRIES - 2 },
      { kind: 'retry', at: NOW + 6_000, attempts: MAX_RETRIES - 1, code: 'http_503', message: 'down' },
    ],
    [
      'the last attempt: retries exhausted, the chat fails (never suppressed)',
      { kind: 'retriable', code: 'http_503', message: 'down' },
      { attempts: MAX_RETRIES - 1 },
      { kind: 'fail', because: 'retries-exhausted', code: 'http_503', message: 'down', suppress: false, attempts: MAX_RETRIES },
    ],
    [
      'a retriable code that would suppress when refused still only fails when exhausted',
      { kind: 'retriable', code: 'forbidden', message: 'odd' },
      { attempts: MAX_RETRIES - 1 },
      { kind: 'fail', because: 'retries-exhausted', code: 'forbidden', message: 'odd', suppress: false, attempts: MAX_RETRIES },
    ],
    // ambiguous, moved
    [
      'an answer lost after the request was written: unknown',
      { kind: 'ambiguous', code: 'timeout', message: 'slow' },
      {},
      { kind: 'unknown', code: 'timeout', message: 'slow' },
    ],
    [
      'an answer lost on a platform that deduplicates: sent again with the same key after the backoff, an attempt counted',
      { kind: 'ambiguous', code: 'timeout', message: 'slow' },
      { attempts: 1, platformDeduplicates: true },
      { kind: 'settle', at: NOW + 1_500, attempts: 2, code: 'timeout', message: 'slow' },
    ],
    [
      'an answer lost on a platform that deduplicates, retries spent: unknown',
      { kind: 'ambiguous', code: 'timeout', message: 'slow' },
      { attempts: MAX_RETRIES - 1, platformDeduplicates: true },
      { kind: 'unknown', code: 'timeout', message: 'slow' },
    ],
    [
      'a chat moved to a new id',
      { kind: 'chat-moved', newChatId: '-100200', code: 'chat_migrated', message: 'moved' },
      {},
      { kind: 'chat-moved', newChatId: '-100200', code: 'chat_migrated' },
    ],
  ])('%s', (_name, result, i, expected) => {
    expect(decideSendOutcome(result, input(i))).toEqual(expected);
  });

  it('the retry jitter comes from the randomness passed in (a stuck 0 and a stuck 1 differ)', () => {
    const retriable: SendResult = { kind: 'retriable', code: 'http_503', message: 'down' };
    const low = decideSendOutcome(retriable, input({ attempts: 2, random: () => 0 }));
    const high = decideSendOutcome(retriable, input({ attempts: 2, random: () => 0.999 }));
    // attempt 3: 4 s exponential, half fixed and half random
    expect(low).toMatchObject({ kind: 'retry', at: NOW + 2 * SEC });
    expect(high).toMatchObject({ kind: 'retry', at: NOW + 3_998 });
  });

  it('reads no randomness unless it retries', () => {
    let reads = 0;
    const random = () => {
      reads++;
      return 0.5;
    };
    decideSendOutcome({ kind: 'retriable', code: 'x', message: 'x' }, input({ attempts: MAX_RETRIES - 1, random }));
    decideSendOutcome({ kind: 'delivered', messageId: 'm' }, input({ random }));
    decideSendOutcome({ kind: 'rejected', code: 'x', message: 'x' }, input({ random }));
    expect(reads).toBe(0);
  });
});
