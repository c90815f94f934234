import type { Clock } from '@metronome/core';
import { AccountRepository, CampaignRepository, MediaRepository, RunControlRepository, TenantRepository, type DB } from '@metronome/db';
import type { Logger, Metrics } from '@metronome/observability';
import type { RunQueue } from '@metronome/queue';
import type { RedisClient } from '@metronome/redis';
import type { Kysely } from 'kysely';
import type { ApiConfig } from './config.js';
import { DirectorySyncs } from './directory-syncs.js';
import type { WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import type { UserClient, UserClientOptions } from '@metronome/transports/telegram-user';

export interface WhatsAppPairing extends Pick<WhatsAppSocketPool, 'pair'> {
  importLinkedSession?(accountId: string, body: { creds?: unknown; keys?: unknown }): Promise<SessionImport>;
}

/** How a session import ended: refused as malformed (nothing stored), or stored and then opened or refused by WhatsApp. */
export type SessionImport =
  | { outcome: 'invalid'; field: string; message: string }
  | { outcome: 'opened' }
  | { outcome: 'refused'; code: string; message: string };

/** Logs an account's platform session out when it is deleted; false when it could not (no socket, held elsewhere). */
export type AccountLogout = (accountId: string, platform: string) => Promise<boolean>;

/** What the composition root (server.ts) or a test hands to buildApp. The caller owns and closes them. */
export interface AppDeps {
  config: ApiConfig;
  db: Kysely<DB>;
  redis: RedisClient;
  queue: RunQueue;
  clock: Clock;
  logger: Logger;
  metrics?: Metrics;
  /** WhatsApp pairing (the socket pool); without it, pairing answers 409 */
  whatsappPairing?: WhatsAppPairing;
  /** telegram_user sign-ins (GramJS, or a fake in tests); without it, sign-in answers 409 */
  telegramSignIn?: TelegramSignIn;
  /** logs an account's session out when it is deleted (the WhatsApp socket pool); without it, credentials are only wiped */
  accountLogout?: AccountLogout;
}

export interface TelegramSignIn {
  makeClient(session: string, options: UserClientOptions): UserClient | Promise<UserClient>;
  apiId: number;
  apiHash: string;
}

export interface ApiContext {
  config: ApiConfig;
  db: Kysely<DB>;
  redis: RedisClient;
  queue: RunQueue;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  tenants: TenantRepository;
  accounts: AccountRepository;
  media: MediaRepository;
  campaigns: CampaignRepository;
  runs: RunControlRepository;
  /** chat directories and their syncs (closed by the chat directory routes) */
  directorySyncs: DirectorySyncs;
  /** tenants deleted through this replica: their tokens are refused at once, even when remembered */
  deletedTenants: Set<string>;
  now(): Date;
}

export function createContext(deps: AppDeps, metrics: Metrics): ApiContext {
  const { config, db, redis, queue, clock, logger } = deps;
  return {
    config,
    db,
    redis,
    queue,
    clock,
    logger,
    metrics,
    tenants: new TenantRepository(db),
    accounts: new AccountRepository(db),
    media: new MediaRepository(db),
    campaigns: new CampaignRepository(db),
    runs: new RunControlRepository(db),
    directorySyncs: new DirectorySyncs(db, redis, config.keyPrefix),
    deletedTenants: new Set(),
    now: () => new Date(clock.now()),
  };
}
