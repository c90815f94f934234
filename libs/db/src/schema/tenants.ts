import type { ColumnType, Generated, Selectable } from 'kysely';
import type { NullableTimestamp } from './shared.js';

export interface TenantsTable {
  id: Generated<string>;
  name: string;
  token_hash: string;
  created_at: Generated<Date>;
  /** migrations/0023: a history retention shorter than HISTORY_RETENTION; null: the default */
  history_retention_ms: ColumnType<string | null, number | null | undefined, number | null>;
  /** migrations/0023: deleted; its rows go in batches */
  deleted_at: NullableTimestamp;
  /** migrations/0023: the salt of its erased chats' hashes */
  chat_salt: Generated<Buffer>;
}

/** migrations/0023: a chat erased from a tenant, kept only as sha256(tenant salt || chat id) */
export interface ErasedChatsTable {
  tenant_id: string;
  chat_hash: Buffer;
  created_at: Generated<Date>;
}

export interface SchedulerLeaderTable {
  id: Generated<number>;
  fence: Generated<number>;
  holder: string | null;
  acquired_at: NullableTimestamp;
}

export type Tenant = Selectable<TenantsTable>;
