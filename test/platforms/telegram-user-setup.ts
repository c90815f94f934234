import { randomUUID } from 'node:crypto';
import { createRedis, loadScripts, redisKeys, SocketLeases } from '@metronome/redis';
import { loadUserClientFactory, TelegramUserTransport, UserClientPool, type UserClientFactory } from '@metronome/transports/telegram-user';
import { FakeTelegramMtproto } from '../helpers/fake-telegram-mtproto.js';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';
import { fileURLToPath } from 'node:url';

/** The fake GramJS client module, as TELEGRAM_USER_CLIENT_MODULE names it for a sender process. */
export const FAKE_CLIENT_MODULE = fileURLToPath(new URL('../helpers/fake-gramjs-client.mjs', import.meta.url));

export interface TelegramUserHarness {
  h: SenderHarness;
  fake: FakeTelegramMtproto;
  /** a Telegram user signed in on the fake, and its Metronome account holding the session */
  seedSignedIn(opts?: {
    groupConcurrency?: number;
    maxSendPerMinute?: number;
  }): Promise<{ tenantId: string; accountId: string; userId: string; session: string }>;
  /** the transport another sender process would have: its own pool on the same leases */
  secondTransport(): Promise<TelegramUserTransport>;
  close(): Promise<void>;
}

let nextPhone = 4_470_000_000;

/**
 * The sender (harness wiring, manual clock) with the telegram_user transport on a FAKE Telegram
 * through the FAKE GramJS client, its connections held by real Redis leases.
 */
export async function startTelegramUserHarness(settings: Parameters<typeof startSenderHarness>[0] = {}): Promise<TelegramUserHarness> {
  let now = () => Date.now();
  const fake = new FakeTelegramMtproto(() => now());
  const url = await fake.listen();
  process.env['FAKE_TELEGRAM_MTPROTO_URL'] = url;
  const makeClient: UserClientFactory = await loadUserClientFactory(FAKE_CLIENT_MODULE);
  const leaseRedis = createRedis(REDIS_URL, 'test-tg-user-lease');
  const leases = new SocketLeases(loadScripts(leaseRedis), redisKeys(uniquePrefix('tg-user')), 2_000);
  const pool = () => new UserClientPool({ makeClient, apiId: 1, apiHash: 'fake', lease: leases, holderId: `test-${randomUUID().slice(0, 8)}` });
  const h = await startSenderHarness(settings, undefined, {
    transports: (clock) => {
      now = () => clock.now();
      return { telegram_user: new TelegramUserTransport({ pool: pool(), clock }) };
    },
  });
  return {
    h,
    fake,
    seedSignedIn: async (opts = {}) => {
      const phone = `+${nextPhone++}`;
      const userId = fake.addUser(phone);
      const session = fake.signedInSession(phone);
      const a = await h.seedAccount({ ...opts, platform: 'telegram_user', externalId: userId, credentials: { session } });
      // as the API creates every telegram_user account: a doubtful send is settled by sending again
      await h.tdb.db.updateTable('accounts').set({ platform_deduplicates: true }).where('id', '=', a.accountId).execute();
      return { tenantId: a.tenantId, accountId: a.accountId, userId, session };
    },
    secondTransport: async () => new TelegramUserTransport({ pool: pool(), clock: h.clock }),
    close: async () => {
      await h.close();
      leaseRedis.disconnect();
      await fake.close();
    },
  };
}
