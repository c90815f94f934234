import type { Kysely } from 'kysely';
import type { DB } from '../types.js';
import { RunRepository } from './run-repository.js';

/**
 * A message the platform took, then refused (WhatsApp's server ERROR ack after the write): its
 * target moves from `sent` to `failed` (or `unknown` when the refusal is ambiguous). The run's
 * counts are derived from its targets (run-counts.ts), so they follow.
 */
export class LateRefusalRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The `sent` target of one of the account's runs whose messages include `messageId` for
   * `chatId`, moved to `status`; the run ids it moved (none: not recorded as sent yet, or
   * already moved). A run that had finished `success` becomes `partial` in the same statement
   * (its `run.status` event and webhook follow): not every chat got it after all.
   */
  async refuse(
    accountId: string,
    chatId: string,
    messageId: string,
    status: 'failed' | 'unknown',
    code: string,
    message: string,
    now: Date,
  ): Promise<string[]> {
    return new RunRepository(this.db).refuseLate(accountId, chatId, messageId, status, code, message, now);
  }
}
