import { retryDelayMs } from './backoff.js';
import { isFloodWait } from './cooling.js';
import type { SendResult } from './send-result.js';
import { suppresses } from './send-safety.js';

/** What one part's answer means for its chat and its account (CONTRACT §4, §5); the sender applies the decision, nothing here does I/O. */

export interface SendOutcomeInput {
  attempts: number;
  /** the part that was sent, 0-based, of `partCount` */
  partIndex: number;
  partCount: number;
  now: number;
  firstPartStartedAt: number;
  /** the end of the account wait this job has already heard of (0: none) */
  blockedUntil: number;
  maxRetries: number;
  random: () => number;
  /** the platform drops a request whose Idempotency-Key it has seen: a doubtful answer is settled by sending again with the same key */
  platformDeduplicates?: boolean;
}

export type SendOutcome =
  | { kind: 'sent-last'; messageId: string; partsSent: number; latencyMs: number }
  | { kind: 'next-part'; messageId: string; partsSent: number }
  /** `floodWait`: a new flood wait, which the account's cooling counts */
  | { kind: 'account-wait'; until: number; blockedUntil: number; floodWait: boolean; code: string; retryAfterMs: number }
  | { kind: 'chat-wait'; until: number; code: string; retryAfterMs: number }
  | { kind: 'stop-account'; releaseAt: number; code: string }
  | { kind: 'retry'; at: number; attempts: number; code: string; message: string }
  | { kind: 'fail'; because: 'rejected' | 'retries-exhausted'; code: string; message: string; suppress: boolean; attempts: number }
  | { kind: 'unknown'; code: string; message: string }
  | { kind: 'settle'; at: number; attempts: number; code: string; message: string }
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
      // one wait however many lanes hear of it; a hand-over between our replicas is no flood wait
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
      if (input.platformDeduplicates && attempts < input.maxRetries) {
        return { kind: 'settle', at: now + retryDelayMs(attempts, input.random), attempts, code: result.code, message: result.message };
      }
      return { kind: 'unknown', code: result.code, message: result.message };
    }
    case 'chat-moved':
      return { kind: 'chat-moved', newChatId: result.newChatId, code: result.code };
  }
}
