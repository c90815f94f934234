import { retryDelayMs } from './backoff.js';
import { isFloodWait } from './cooling.js';
import type { SendResult } from './send-result.js';
import { suppresses } from './send-safety.js';

/**
 * What one part's answer means for its chat and its account (CONTRACT §4, §5), decided from
 * the answer, the target's attempts so far and `now`. The sender applies the decision
 * (repository writes, metrics, log lines); nothing here does I/O.
 */

/** What the decision reads besides the answer. */
export interface SendOutcomeInput {
  /** attempts already counted on the target, before this one */
  attempts: number;
  /** the part that was sent, 0-based, of `partCount` */
  partIndex: number;
  partCount: number;
  now: number;
  /** when the chat's first part was sent, for the delivery latency */
  firstPartStartedAt: number;
  /** the end of the account wait this job has already heard of (0: none) */
  blockedUntil: number;
  /** attempts after which a retriable failure fails the chat */
  maxRetries: number;
  /** the retry jitter's randomness, in [0, 1) */
  random: () => number;
  /**
   * the platform drops a request whose Idempotency-Key it has seen, answering as the first
   * time (an http account's `platformDeduplicates`): a doubtful answer is settled by sending
   * again with the same key
   */
  platformDeduplicates?: boolean;
}

export type SendOutcome =
  /** the chat's last part was delivered: the chat is sent */
  | { kind: 'sent-last'; messageId: string; partsSent: number; latencyMs: number }
  /** a part before the last was delivered: it is recorded and the next part may follow */
  | { kind: 'next-part'; messageId: string; partsSent: number }
  /**
   * the account may send nothing until `until`; `blockedUntil` is the job's wait after this
   * one; `floodWait` tells whether it is a new flood wait the account's cooling counts
   */
  | { kind: 'account-wait'; until: number; blockedUntil: number; floodWait: boolean; code: string; retryAfterMs: number }
  /** only this chat waits until `until`; other chats go on */
  | { kind: 'chat-wait'; until: number; code: string; retryAfterMs: number }
  /** the account is logged out or banned: the chat is due again at `releaseAt`, the job stops */
  | { kind: 'stop-account'; releaseAt: number; code: string }
  /** not delivered, retried at `at` (an attempt counted: `attempts` after this one) */
  | { kind: 'retry'; at: number; attempts: number; code: string; message: string }
  /**
   * the chat failed: refused for good (`rejected`, suppressing the chat for some codes), or
   * its retries ran out (`retries-exhausted`, `attempts` after this one)
   */
  | { kind: 'fail'; because: 'rejected' | 'retries-exhausted'; code: string; message: string; suppress: boolean; attempts: number }
  /** may or may not have arrived: never sent again automatically */
  | { kind: 'unknown'; code: string; message: string }
  /**
   * may or may not have arrived, on a platform that deduplicates: sent again at `at` with the
   * same key, whose answer settles it (an attempt counted: `attempts` after this one)
   */
  | { kind: 'settle'; at: number; attempts: number; code: string; message: string }
  /** not delivered: the chat lives under `newChatId` now */
  | { kind: 'chat-moved'; newChatId: string; code: string };

export function decideSendOutcome(result: SendResult, input: SendOutcomeInput): SendOutcome {
  const { now } = input;
  switch (result.kind) {
    case 'delivered': {
      const partsSent = input.partIndex + 1;
      if (input.partIndex === input.partCount - 1) {
        return { kind: 'sent-last', messageId: result.messageId, partsSent, latencyMs: Math.round(now - input.firstPartStartedAt) };
      }
      return { kind: 'next-part', messageId: result.messageId, partsSent };
    }
    case 'account-wait': {
      const until = now + result.retryAfterMs;
      // One wait, however many lanes hear of it: another answer inside a wait already heard is
      // the same wait (a connection hand-over between replicas is no judgement of the account's pace).
      const floodWait = now >= input.blockedUntil && isFloodWait(result.code);
      return {
        kind: 'account-wait',
        until,
        blockedUntil: Math.max(input.blockedUntil, until),
        floodWait,
        code: result.code,
        retryAfterMs: result.retryAfterMs,
      };
    }
    case 'chat-wait':
      return { kind: 'chat-wait', until: now + result.retryAfterMs, code: result.code, retryAfterMs: result.retryAfterMs };
    case 'account-unavailable':
      return { kind: 'stop-account', releaseAt: now, code: result.code };
    case 'rejected':
      return { kind: 'fail', because: 'rejected', code: result.code, message: result.message, suppress: suppresses(result.code), attempts: input.attempts + 1 };
    case 'retriable': {
      const attempts = input.attempts + 1;
      if (attempts >= input.maxRetries) {
        return { kind: 'fail', because: 'retries-exhausted', code: result.code, message: result.message, suppress: false, attempts };
      }
      return { kind: 'retry', at: now + retryDelayMs(attempts, input.random), attempts, code: result.code, message: result.message };
    }
    case 'ambiguous': {
      const attempts = input.attempts + 1;
      // sent again while retries last; past them, still in doubt
      if (input.platformDeduplicates && attempts < input.maxRetries) {
        return { kind: 'settle', at: now + retryDelayMs(attempts, input.random), attempts, code: result.code, message: result.message };
      }
      return { kind: 'unknown', code: result.code, message: result.message };
    }
    case 'chat-moved':
      return { kind: 'chat-moved', newChatId: result.newChatId, code: result.code };
  }
}
