import type { Kysely } from 'kysely';
import type { DB } from '../types.js';
import { RunRepository } from './run-repository.js';

/** A message the platform took, then refused (WhatsApp's server ERROR ack): its target leaves `sent`; the run's counts follow. */
export class LateRefusalRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Moves the account's `sent` target with `messageId` for `chatId` to `status`, a `success` run to `partial`; the run ids moved. */
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
