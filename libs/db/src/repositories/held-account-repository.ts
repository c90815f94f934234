import type { Kysely } from 'kysely';
import type { DB, Platform } from '../types.js';

/** An account kept connected, with what its connection needs (credentials and proxy still sealed). */
export interface HeldAccountRow {
  id: string;
  platform: Platform;
  externalId: string | null;
  credentials: Buffer | null;
  proxy: Buffer | null;
  /** `on_demand`: only its jobs open its connection; the holder closes it once idle with no run open */
  connection: 'always' | 'on_demand';
  /** a run of it is queued or running: its jobs connect it where they run */
  sending: boolean;
}

/** The accounts the senders keep connected whether or not a run sends (issue 53). */
export class HeldAccountRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Every account of `platforms` that can send or is cooling (cooling pauses sends, not receipts or replies), by id. */
  async alwaysConnected(platforms: readonly Platform[]): Promise<HeldAccountRow[]> {
    if (platforms.length === 0) return [];
    return (
      this.db
        .selectFrom('accounts')
        .select(['id', 'platform', 'external_id as externalId', 'credentials', 'proxy', 'connection'])
        // a hashed subplan over the open runs (runs_open_idx), not a lookup per account
        .select((eb) =>
          eb('id', 'in', eb.selectFrom('runs').select('account_id').where('status', 'in', ['queued', 'running']))
            .$castTo<boolean>()
            .as('sending'),
        )
        .where('platform', 'in', [...platforms])
        .where('status', 'in', ['active', 'cooling'])
        .where('deleted_at', 'is', null)
        .orderBy('id')
        .execute()
    );
  }
}
