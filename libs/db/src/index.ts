import path from 'node:path';
import { fileURLToPath } from 'node:url';

export * from './types.js';
export { createDb, type DbOptions } from './connection.js';
export { prepareStatements, statementName, MAX_PREPARED_PER_CONNECTION } from './prepared-statements.js';
export { migrate, ensureDatabase, redactUrl, type MigrateResult } from './migrate.js';

/** The repository's migrations/ directory (same relative place from src/ and dist/). */
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../migrations');
export { countRuns, emptyCounts } from './repositories/run-counts.js';
export { RunWaitingRepository, type RunWaitingRow, type HoldRow } from './repositories/run-waiting-repository.js';
export {
  insertRuns,
  insertTestRun,
  createDueRun,
  planDueRun,
  type NewRun,
  type RunIds,
} from './repositories/run-creation.js';
export {
  CampaignProblem,
  ensure,
  timeProblem,
  scheduleProblem,
  messagesProblem,
  timezoneProblem,
  deliveryWindowProblem,
  planProblem,
  deactivationReason,
  evaluationProblem,
} from './campaign-check.js';
export { campaignReach, type CampaignReach } from './repositories/campaign-reach.js';
export { campaignChats, type CampaignChatRow, type CampaignChatQuery } from './repositories/campaign-chats.js';
export { partsUseBuiltins } from './repositories/chat-variables-sql.js';
export { AudienceRepository, AUDIENCE_NAME_INDEX, type AudienceRow, type AudienceDeletion, type NamingCampaign } from './repositories/audience-repository.js';
export { AudienceMemberRepository, type AudienceMember, type MemberWrite, type MemberPage } from './repositories/audience-member-repository.js';
export { dueOccurrence, occurrenceRun, planDue, type RunPlan } from './repositories/occurrence-run.js';
export type { JobStep } from './repositories/next-job-step.js';
export {
  senderRepositories,
  type SenderRepositories,
  type RunForSend,
  type RunProgress,
  type RecentSends,
  type AccountHealthRow,
} from './repositories/sender-repositories.js';
export { RunRepository, type LostJob, type HandedOver } from './repositories/run-repository.js';
export { MediaRefRepository } from './repositories/media-ref-repository.js';
export {
  TargetSendRepository,
  type ClaimedTarget,
  type ClaimRequest,
  type ClaimResult,
  type CloseRequest,
  type CloseResult,
  type PartWrite,
  type SentSettlement,
  type TargetRef,
  type TargetSettlement,
} from './repositories/target-sends.js';
export {
  ScheduleRepository,
  TickTransaction,
  StaleFenceError,
  type DueCampaign,
  type CampaignAdvance,
  type OpenRun,
} from './repositories/schedule-repository.js';
export { TenantRepository, type TenantRow, type ListedTenant } from './repositories/tenant-repository.js';
export { OptOutRepository, type OptOutWrite } from './repositories/opt-out-repository.js';
export { HeldAccountRepository, type HeldAccountRow } from './repositories/held-account-repository.js';
export {
  AccountRepository,
  type AccountRow,
  type NewAccountRow,
  type AccountChanges,
  type ChatSendRow,
  type SuppressionRow,
} from './repositories/account-repository.js';
export { MediaRepository, type MediaRow, type NewMediaRow } from './repositories/media-repository.js';
export {
  CampaignRepository,
  type CampaignRow,
  type NewCampaignRow,
  type SavedCampaign,
  type FirstRun,
  type CampaignChanges,
} from './repositories/campaign-repository.js';
export {
  RunControlRepository,
  type RunRow,
  type RunWithWindow,
  type TargetRow,
  type Requeue,
  type RunEventRow,
  type RunFilter,
  type ListPage,
} from './repositories/run-control-repository.js';
export type { HeldCampaign, HeldUpdate, WindowPausedRun, AutoResume, ResumedRun } from './repositories/schedule-repository.js';
export { WhatsAppSentMessageRepository } from './repositories/whatsapp-sent-message-repository.js';
export { WhatsAppAuthRepository, WHATSAPP_CREDS_KIND, type WhatsAppAuthWrite } from './repositories/whatsapp-auth-repository.js';
export { SealedSecretsRepository, type SealedCredential, type SealedAuthRow } from './repositories/sealed-secrets-repository.js';
export { resealSecrets, type ResealReport } from './reseal.js';
export { isTransientDbError } from './transient-error.js';
export { WebhookRepository, type WebhookRow, type NewWebhookRow, type WebhookChanges, type SealedWebhookSecret } from './repositories/webhook-repository.js';
export { resealWebhookSecrets, type WebhookResealReport } from './webhook-reseal.js';
export {
  WebhookDeliveryRepository,
  type WebhookDeliveryRow,
  type ClaimedDelivery,
  type DeliveryAttempt,
} from './repositories/webhook-delivery-repository.js';
export { LateRefusalRepository } from './repositories/late-refusals.js';
export { AccountCoolingRepository, type HealthWrite, type CoolingStart, type CoolingEnded } from './repositories/account-cooling.js';
export { NewChatLimitRepository } from './repositories/new-chat-limits.js';
export { TelegramPeerRepository } from './repositories/telegram-peers.js';
export {
  ChatDirectoryRepository,
  directorySortKey,
  type DirectoryEntryRow,
  type DirectoryQuery,
  type DirectorySyncRow,
  type SyncAccount,
} from './repositories/chat-directory-repository.js';
export { RetentionRepository, type RetentionPolicy } from './repositories/retention-repository.js';
export { ErasureRepository, type PurgeScope, type ErasedChat } from './repositories/erasure-repository.js';
export { ExportRepository, type ExportLine } from './repositories/export-repository.js';
export { ReceiptRepository, type ReceiptInput, type ReceiptOutcome, type ReceiptChange, type ReceiptSubmission } from './repositories/receipt-repository.js';
export { NotDeliveringRepository, type NotDeliveringSettings, type NotDelivering } from './repositories/not-delivering.js';
export { TelegramSignInRepository, type TelegramSignInRow } from './repositories/telegram-sign-in-repository.js';
export { accountProxies } from './account-proxies.js';
