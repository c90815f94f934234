import { sql, type Kysely } from 'kysely';
import { chatKey, ManualClock } from '@metronome/core';
import {
  AccountRepository,
  campaignReach,
  ErasureRepository,
  OptOutRepository,
  ReceiptRepository,
  RunRepository,
  TelegramPeerRepository,
  type DB,
} from '@metronome/db';
import { createLogger, Metrics } from '@metronome/observability';
import { userChatIds, withKeptUsername } from '@metronome/transports/telegram-user';
import { OptOutListener } from '../../services/sender/src/opt-outs.js';
import { ReceiptWriter } from '../../services/sender/src/receipt-writer.js';
import { seedAccount, seedCampaign, seedRun, seedTenant } from '../helpers/seed.js';
import { createTestDatabase, eventually, type TestDatabase } from '../helpers/test-env.js';

// Telegram usernames are case-insensitive (migrations/0044): a telegram_user account's target typed
// `@Friend_One` is the user whose username arrives as `friend_one`, for replies, opt-outs and the
// suppression list; other platforms compare chat ids as they are. Real PostgreSQL, the sender's
// opt-out listener and reply writer, the transport's chat ids of an incoming text.

let tdb: TestDatabase;
let db: Kysely<DB>;
const clock = new ManualClock(Date.parse('2026-06-01T09:00:00Z'));
const now = () => new Date(clock.now());
const logger = createLogger('telegram-user-usernames-test', 'silent');
const metrics = new Metrics('telegram-user-usernames-test');
let writer: ReceiptWriter;

beforeAll(async () => {
  tdb = await createTestDatabase('tg_usernames');
  db = tdb.db;
  writer = new ReceiptWriter({ repo: new ReceiptRepository(db), metrics, logger, flushEveryMs: 3_600_000, replyWindowMs: 3_600_000 }, () => clock.now());
});
afterAll(async () => {
  await writer.close();
  await tdb.drop();
});

async function account(platform: 'telegram_user' | 'whatsapp' | 'telegram' | 'http') {
  const tenantId = await seedTenant(db);
  const accountId = await seedAccount(db, tenantId, { platform, opt_out_keywords: ['STOP'], ...(platform !== 'http' && { external_id: null }) });
  return { tenantId, accountId };
}

/** A queued run of a campaign of its own to `targets`, all pending. */
async function run(owner: { tenantId: string; accountId: string }, targets: string[]) {
  const campaignId = await seedCampaign(db, owner, { targets });
  return seedRun(db, { ...owner, campaignId, parts: [{ type: 'text', text: 'hi' }], scheduledAt: now() });
}

const targets = async (runId: string) =>
  Object.fromEntries(
    (await db.selectFrom('run_targets').select(['chat_id', 'status', 'error_code', 'replied_at']).where('run_id', '=', runId).execute()).map((t) => [
      t.chat_id,
      t.replied_at ? 'replied' : `${t.status}${t.error_code ? ` ${t.error_code}` : ''}`,
    ]),
  );
const listed = async (accountId: string) => (await new AccountRepository(db).suppressions(accountId, { limit: 100 })).map((s) => `${s.chatId} ${s.reason}`);
const listener = () => new OptOutListener({ repo: new OptOutRepository(db), clock, logger, metrics });

test('a reply and a STOP from the user whose username arrives as friend_one find the target typed @Friend_One; the next run skips @FRIEND_ONE', async () => {
  const owner = await account('telegram_user');
  const peers = new TelegramPeerRepository(db);
  await peers.save(owner.accountId, [{ chatId: '555', kind: 'user', accessHash: '9', username: 'friend_one' }], now());
  const sent = await run(owner, ['@Friend_One', 'Pal_Two', '777']);
  await db
    .updateTable('run_targets')
    .set({ status: 'sent', sent_at: new Date(clock.now() - 60_000) })
    .where('run_id', '=', sent)
    .execute();

  // an updateShortMessage names the user by id only: the kept peer tells its username, lower-cased
  writer.onReply(owner.accountId, withKeptUsername(owner.accountId, { chatIds: ['555'], text: 'Thanks!' }, peers), 'telegram_user');
  await eventually('the reply counted', async () => (await targets(sent))['@Friend_One'] === 'replied', 5_000, 10);
  expect(await targets(sent)).toEqual({ '@Friend_One': 'replied', Pal_Two: 'sent', '777': 'sent' });
  // the repository keys what it is given too
  expect(await new ReceiptRepository(db).reply(owner.accountId, ['@PAL_TWO'], now(), 3_600_000, 'telegram_user')).toBe(1);
  expect(await targets(sent)).toEqual({ '@Friend_One': 'replied', Pal_Two: 'replied', '777': 'sent' });

  // a run open when the STOP comes, and the next one
  const open = await run(owner, ['@Friend_One']);
  expect(await listener().handle(owner.accountId, { chatIds: userChatIds('555', ['friend_one']), text: 'stop' }, 'telegram_user')).toBe('STOP');
  expect(await listed(owner.accountId)).toEqual(['555 opt_out', '@friend_one opt_out']);
  expect(await targets(open)).toEqual({ '@Friend_One': 'skipped suppressed' });
  const next = await run(owner, ['@FRIEND_ONE', 'Friend_One', '777']);
  expect(await new RunRepository(db).markRunning(next, now())).toBe(true);
  expect(await targets(next)).toEqual({ '@FRIEND_ONE': 'skipped suppressed', Friend_One: 'skipped suppressed', '777': 'pending' });
});

test("the operator's list, a refusal, an opt-out, the reach preview and an erasure key a telegram_user username; DELETE takes it off in any case", async () => {
  const owner = await account('telegram_user');
  const accounts = new AccountRepository(db);
  expect(await accounts.suppress(owner.accountId, ['@Friend_One', 'FRIEND_ONE', '-100123'], 'operator', now())).toBe(2);
  await accounts.chatRefused(owner.accountId, 'Other_Guy', 'user_is_blocked', { suppress: true, reason: null }, now());
  expect(await new OptOutRepository(db).optOut(owner.accountId, ['@Pal_Two', 'PAL_TWO'], now(), 'telegram_user')).toEqual({ listed: 1, skipped: 0 });
  expect(await listed(owner.accountId)).toEqual(['-100123 operator', '@friend_one operator', '@other_guy user_is_blocked', '@pal_two opt_out']);
  const reach = await campaignReach(db, { ...owner, targetChats: ['@friend_ONE', '@OTHER_GUY', '-100123', '777'], targetKeys: [], audienceIds: [] });
  expect(reach).toMatchObject({ targets: 4, suppressed: 3, reach: 1 });
  expect(await accounts.unsuppress(owner.accountId, '@FRIEND_one')).toBe(true);
  expect(await accounts.unsuppress(owner.accountId, '@friend_one')).toBe(false);
  expect(await listed(owner.accountId)).toEqual(['-100123 operator', '@other_guy user_is_blocked', '@pal_two opt_out']);
  // erasing the chat as the operator typed it erases its listing
  await new ErasureRepository(db).eraseChat(owner.tenantId, 'Other_Guy', now());
  expect(await listed(owner.accountId)).toEqual(['-100123 operator', '@pal_two opt_out']);
});

test.each(['whatsapp', 'telegram', 'http'] as const)(
  'a %s account compares chat ids as they are: a listing of @friend_one leaves @Friend_One',
  async (platform) => {
    const owner = await account(platform);
    await new AccountRepository(db).suppress(owner.accountId, ['@friend_one', 'Other_Guy'], 'operator', now());
    expect(await listed(owner.accountId)).toEqual(['@friend_one operator', 'Other_Guy operator']);
    const next = await run(owner, ['@Friend_One', '@friend_one', 'other_guy', 'Pal_Two']);
    expect(await new OptOutRepository(db).optOut(owner.accountId, ['@pal_two'], now(), platform)).toEqual({ listed: 1, skipped: 0 });
    expect(await new RunRepository(db).markRunning(next, now())).toBe(true);
    expect(await targets(next)).toEqual({ '@Friend_One': 'pending', '@friend_one': 'skipped suppressed', other_guy: 'pending', Pal_Two: 'pending' });
  },
);

test("chat_key in SQL is libs/core's chatKey", async () => {
  const chats = [
    '@Friend_One',
    'Friend_One',
    'friend_one',
    '@abcd',
    '@abc',
    '@1abcd',
    '555',
    '-100123',
    '-42',
    '60123@s.whatsapp.net',
    '@Kelvin_\u212a',
    'a'.repeat(33),
  ];
  const platforms = ['telegram_user', 'telegram', 'whatsapp', 'http'];
  const pairs = platforms.flatMap((p) => chats.map((c) => [p, c] as const));
  const rows = await sql<{
    key: string;
  }>`select chat_key(p, c) as key from unnest(${pairs.map((x) => x[0])}::text[], ${pairs.map((x) => x[1])}::text[]) with ordinality as x(p, c, i) order by i`.execute(
    db,
  );
  expect(rows.rows.map((r) => r.key)).toEqual(pairs.map(([p, c]) => chatKey(p, c)));
  expect(chatKey('telegram_user', '@Friend_One')).toBe('@friend_one');
  expect(chatKey('telegram_user', 'Friend_One')).toBe('@friend_one');
  expect(chatKey('whatsapp', '@Friend_One')).toBe('@Friend_One');
});
