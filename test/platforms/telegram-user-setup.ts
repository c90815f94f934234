import { randomUUID } from 'node:crypto';
import type { TelegramPeerStore } from '@metronome/core';
import { TelegramPeerRepository } from '@metronome/db';
import { createRedis, loadScripts, redisKeys, SocketLeases } from '@metronome/redis';
import { gramjsClientFactory, keepLearntPeers, TelegramUserTransport, trustTelegramServerKey, UserClientPool } from '@metronome/transports/telegram-user';
import { RecordingDirectorySink } from '../helpers/recording-directory-sink.js';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';
import { type DialogSpec, WireTelegram } from '../helpers/wire-telegram.js';

export interface TelegramUserHarness {
  h: SenderHarness;
  fake: WireTelegram;
  /**
   * A Telegram user signed in on the fake, and its Metronome account holding the session. With
   * `dialogs` (dialogsOf), the account is in those chats and its directory is synced through the
   * sender's transport, as an operator's sync does: their access hashes are kept in PostgreSQL,
   * so sends can address them.
   */
  seedSignedIn(opts?: {
    groupConcurrency?: number;
    maxSendPerMinute?: number;
    dialogs?: DialogSpec[];
  }): Promise<{ tenantId: string; accountId: string; userId: string; session: string }>;
  /** the transport another sender process would have: its own pool on the same leases and peers */
  secondTransport(): Promise<TelegramUserTransport>;
  close(): Promise<void>;
}

/**
 * Dialogs the account is a member of, one per chat id as a send names it: `-100{id}` a
 * supergroup (`forum` ones too when asked), `-{id}` a basic group, else a user.
 */
export function dialogsOf(chatIds: readonly string[], o: { forum?: boolean } = {}): DialogSpec[] {
  return [...new Set(chatIds)].map((chatId): DialogSpec => {
    if (chatId.startsWith('-100')) return { kind: 'supergroup', id: chatId.slice(4), title: `chat ${chatId}`, members: 10, ...(o.forum && { forum: true }) };
    if (chatId.startsWith('-')) return { kind: 'group', id: chatId.slice(1), title: `group ${chatId}`, members: 5 };
    return { kind: 'user', id: chatId, firstName: `User ${chatId}` };
  });
}

let nextPhone = 4_470_000_000;

/**
 * The sender (harness wiring, manual clock) with the telegram_user transport as the sender
 * builds it — the REAL GramJS client (gramjsClientFactory), its connections held by real Redis
 * leases, its peers in real PostgreSQL — against the FAKE Telegram on the wire (WireTelegram:
 * MTProto over TCP), which reads the harness's clock. `timeoutMs`: the transport's (SEND_TIMEOUT_MS).
 */
export async function startTelegramUserHarness(
  settings: Parameters<typeof startSenderHarness>[0] = {},
  o: { timeoutMs?: number } = {},
): Promise<TelegramUserHarness> {
  let now = () => Date.now();
  const fake = new WireTelegram(() => now());
  await fake.start();
  trustTelegramServerKey(fake.serverKeyPem);
  const leaseRedis = createRedis(REDIS_URL, 'test-tg-user-lease');
  const leases = new SocketLeases(loadScripts(leaseRedis), redisKeys(uniquePrefix('tg-user')), 2_000);
  // the harness's database exists once it started: the transports are built before
  let store: TelegramPeerStore | null = null;
  const peers: TelegramPeerStore = { find: (...a) => store!.find(...a), save: (...a) => store!.save(...a) };
  const timeoutMs = o.timeoutMs ?? settings.sendTimeoutMs ?? 5_000;
  const transport = (clock: SenderHarness['clock']) =>
    new TelegramUserTransport({
      pool: new UserClientPool({
        makeClient: gramjsClientFactory,
        // what GramJS learns (answers, updates) kept in PostgreSQL, as the sender keeps it
        onPeersLearnt: keepLearntPeers(peers, () => new Date(clock.now())),
        apiId: 1,
        apiHash: 'wire',
        dc: fake.dc(),
        lease: leases,
        holderId: `test-${randomUUID().slice(0, 8)}`,
      }),
      clock,
      peers,
      timeoutMs,
    });
  let h: SenderHarness;
  try {
    h = await startSenderHarness(settings, undefined, {
      transports: (clock) => {
        now = () => clock.now();
        return { telegram_user: transport(clock) };
      },
    });
  } catch (error) {
    leaseRedis.disconnect();
    await fake.close();
    throw error;
  }
  store = new TelegramPeerRepository(h.tdb.db);
  return {
    h,
    fake,
    seedSignedIn: async ({ dialogs, ...opts } = {}) => {
      const phone = `+${nextPhone++}`;
      const userId = fake.addUser(phone);
      if (dialogs) fake.setDialogs(userId, dialogs);
      const session = await fake.signedInSession(phone);
      const a = await h.seedAccount({ ...opts, platform: 'telegram_user', externalId: userId, credentials: { session } });
      // as the API creates every telegram_user account: a doubtful send is settled by sending again
      await h.tdb.db.updateTable('accounts').set({ platform_deduplicates: true }).where('id', '=', a.accountId).execute();
      if (dialogs) {
        const sink = new RecordingDirectorySink();
        await h.deps.transports['telegram_user']!.syncDirectory!({ id: a.accountId, externalId: userId, credentials: { session } }, sink);
        const state = sink.state(a.accountId);
        if (state?.status !== 'ok') throw new Error(`the account's directory did not sync: ${JSON.stringify(state)}`);
      }
      return { tenantId: a.tenantId, accountId: a.accountId, userId, session };
    },
    secondTransport: async () => transport(h.clock),
    close: async () => {
      await h.close();
      leaseRedis.disconnect();
      await fake.close();
    },
  };
}
