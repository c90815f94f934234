// Kysely's view of migrations/*.sql, one file per aggregate under schema/; keep in step with the SQL.
import type {
  AccountsTable,
  AccountSuppressionsTable,
  ChatDirectorySyncsTable,
  ChatDirectoryTable,
  TelegramSignInsTable,
  WhatsappAuthTable,
  WhatsappIdentitiesTable,
  TelegramPeersTable,
  WhatsappSentMessagesTable,
} from './schema/accounts.js';
import type { AudienceMembersTable, AudiencesTable, CampaignsTable, MediaTable, MediaUploadsTable } from './schema/campaigns.js';
import type { RunEventsTable, RunsTable, RunTargetsTable, TargetMemberReceiptsTable } from './schema/runs.js';
import type { ErasedChatsTable, SchedulerLeaderTable, TenantsTable } from './schema/tenants.js';
import type { WebhookDeliveriesTable, WebhooksTable } from './schema/webhooks.js';

export type * from './schema/accounts.js';
export type * from './schema/campaigns.js';
export type * from './schema/runs.js';
export type * from './schema/shared.js';
export type * from './schema/tenants.js';
export type * from './schema/webhooks.js';

export interface DB {
  tenants: TenantsTable;
  accounts: AccountsTable;
  account_suppressions: AccountSuppressionsTable;
  media: MediaTable;
  media_uploads: MediaUploadsTable;
  campaigns: CampaignsTable;
  audiences: AudiencesTable;
  audience_members: AudienceMembersTable;
  runs: RunsTable;
  run_targets: RunTargetsTable;
  run_events: RunEventsTable;
  scheduler_leader: SchedulerLeaderTable;
  whatsapp_auth: WhatsappAuthTable;
  whatsapp_sent_messages: WhatsappSentMessagesTable;
  whatsapp_identities: WhatsappIdentitiesTable;
  telegram_peers: TelegramPeersTable;
  target_member_receipts: TargetMemberReceiptsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  chat_directory: ChatDirectoryTable;
  telegram_sign_ins: TelegramSignInsTable;
  chat_directory_syncs: ChatDirectorySyncsTable;
  erased_chats: ErasedChatsTable;
}
