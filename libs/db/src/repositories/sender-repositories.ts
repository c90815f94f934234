import type { Kysely } from 'kysely';
import type { DB } from '../types.js';
import { AccountRepository } from './account-repository.js';
import { MediaRefRepository } from './media-ref-repository.js';
import { RunRepository } from './run-repository.js';

export type { AccountHealthRow, RecentSends, RunForSend, RunProgress } from './send-shapes.js';

/** The repositories a send job goes through besides TargetSendRepository and AccountCoolingRepository; plain fields, so a test can wrap one. */
export interface SenderRepositories {
  runs: RunRepository;
  accounts: AccountRepository;
  mediaRefs: MediaRefRepository;
}

export function senderRepositories(db: Kysely<DB>): SenderRepositories {
  return { runs: new RunRepository(db), accounts: new AccountRepository(db), mediaRefs: new MediaRefRepository(db) };
}
