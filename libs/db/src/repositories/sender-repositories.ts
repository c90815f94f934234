import type { Kysely } from 'kysely';
import type { DB } from '../types.js';
import { AccountRepository } from './account-repository.js';
import { MediaRefRepository } from './media-ref-repository.js';
import { RunRepository } from './run-repository.js';

export type { AccountHealthRow, RecentSends, RunForSend, RunProgress } from './send-shapes.js';

/**
 * The repositories a send job goes through besides its targets' (TargetSendRepository) and
 * its account's cooling (AccountCoolingRepository): one per aggregate, each owning its table's
 * writes. Plain fields, so a test can wrap one (sender-statements.test.ts counts calls).
 */
export interface SenderRepositories {
  runs: RunRepository;
  accounts: AccountRepository;
  mediaRefs: MediaRefRepository;
}

/** The sender's repositories over one database handle. */
export function senderRepositories(db: Kysely<DB>): SenderRepositories {
  return { runs: new RunRepository(db), accounts: new AccountRepository(db), mediaRefs: new MediaRefRepository(db) };
}
