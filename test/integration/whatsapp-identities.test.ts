import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ManualClock } from '@metronome/core';
import { AccountRepository, OptOutRepository, WhatsAppAuthRepository, type DB } from '@metronome/db';
import { loadAuthState } from '@metronome/transports/whatsapp';
import { createLogger } from '@metronome/observability';
import { addTransactionCapability } from '@whiskeysockets/baileys';
// Baileys' own store of LID ↔ phone-number pairs (not re-exported by its index; no `exports` map)
import { LIDMappingStore } from '@whiskeysockets/baileys/lib/Signal/lid-mapping.js';
import { seedAccount, seedCampaign, seedRun, seedTenant } from '../helpers/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// One person, two WhatsApp identities (migrations/0028): the pairs Baileys learns are copied
// from its auth key writes into `whatsapp_identities`, and a suppression under either identity
// holds under the other, whichever was learnt first. Real PostgreSQL; Baileys' own
// LIDMappingStore writes the pairs through the account's auth state.

let tdb: TestDatabase;
let db: Kysely<DB>;
const clock = new ManualClock(Date.parse('2026-06-01T09:00:00Z'));
const KEY = randomBytes(32);
const logger = createLogger('whatsapp-identities-test', 'silent');
const now = () => new Date(clock.now());

beforeAll(async () => {
  tdb = await createTestDatabase('wa_identities');
  db = tdb.db;
});
afterAll(() => tdb.drop());

async function account() {
  const tenantId = await seedTenant(db);
  const accountId = await seedAccount(db, tenantId, { platform: 'whatsapp', external_id: null });
  return { tenantId, accountId };
}

/** Stores pairs as a socket does: Baileys' LIDMappingStore over the account's auth state. */
async function learn(accountId: string, pairs: { lid: string; pn: string }[]) {
  const { state } = await loadAuthState(new WhatsAppAuthRepository(db), accountId, [KEY], clock);
  const keys = addTransactionCapability(state.keys, logger as never, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
  await new LIDMappingStore(keys, logger as never, async () => undefined).storeLIDPNMappings(pairs);
}

async function openRun(owner: { tenantId: string; accountId: string }, targets: string[]) {
  const campaignId = await seedCampaign(db, owner, { targets });
  return seedRun(db, { ...owner, campaignId, parts: [{ type: 'text', text: 'hi' }], scheduledAt: now() });
}

const suppressed = async (accountId: string) => (await new AccountRepository(db).suppressions(accountId, { limit: 100 })).map((s) => `${s.chatId} ${s.reason}`);
const targets = async (runId: string) =>
  db.selectFrom('run_targets').select(['chat_id', 'status', 'error_code']).where('run_id', '=', runId).orderBy('chat_id').execute();

test("the pairs Baileys' own LID store writes are kept in plain, device-free, once each", async () => {
  const { accountId } = await account();
  await learn(accountId, [{ lid: '987650000001:3@lid', pn: '60100000001:3@s.whatsapp.net' }]);
  await learn(accountId, [
    { lid: '987650000001@lid', pn: '60100000001@s.whatsapp.net' },
    { lid: '987650000002@lid', pn: '60100000002@s.whatsapp.net' },
  ]);
  const rows = await db.selectFrom('whatsapp_identities').select(['lid', 'pn']).where('account_id', '=', accountId).orderBy('lid').execute();
  expect(rows).toEqual([
    { lid: '987650000001@lid', pn: '60100000001@s.whatsapp.net' },
    { lid: '987650000002@lid', pn: '60100000002@s.whatsapp.net' },
  ]);
});

test('a STOP from a LID nobody knew is carried to the phone number when the pair is learnt: listed, and open targets skipped', async () => {
  const owner = await account();
  const started = await openRun(owner, ['+60100000011', '60100000012']);
  const untouched = await openRun(owner, ['60100000011']);
  // this run's request to the person already began: a pair learnt now does not take it back
  await db.updateTable('run_targets').set({ send_started_at: now() }).where('run_id', '=', untouched).execute();
  expect(await new OptOutRepository(db).optOut(owner.accountId, ['987650000011@lid'], now())).toEqual({ listed: 1, skipped: 0 });

  await learn(owner.accountId, [{ lid: '987650000011@lid', pn: '60100000011@s.whatsapp.net' }]);
  expect(await suppressed(owner.accountId)).toEqual([
    '+60100000011 opt_out',
    '60100000011 opt_out',
    '60100000011@s.whatsapp.net opt_out',
    '987650000011@lid opt_out',
  ]);
  expect(await targets(started)).toEqual([
    { chat_id: '+60100000011', status: 'skipped', error_code: 'suppressed' },
    { chat_id: '60100000012', status: 'pending', error_code: null },
  ]);
  expect(await targets(untouched)).toEqual([{ chat_id: '60100000011', status: 'pending', error_code: null }]);
});

test('a refusal under the phone number lists the LID too, whether the pair was known before or learnt after', async () => {
  const owner = await account();
  const repo = new AccountRepository(db);
  await learn(owner.accountId, [{ lid: '987650000021@lid', pn: '60100000021@s.whatsapp.net' }]);
  await repo.chatRefused(owner.accountId, '+60100000021', 'forbidden', { suppress: true, reason: null }, now());
  await repo.chatRefused(owner.accountId, '60100000022', 'chat_not_found', { suppress: true, reason: null }, now());
  const later = await openRun(owner, ['987650000022@lid']);
  await learn(owner.accountId, [{ lid: '987650000022@lid', pn: '60100000022@s.whatsapp.net' }]);
  expect(await suppressed(owner.accountId)).toEqual([
    '+60100000021 forbidden',
    '+60100000022 chat_not_found',
    '60100000021 forbidden',
    '60100000021@s.whatsapp.net forbidden',
    '60100000022 chat_not_found',
    '60100000022@s.whatsapp.net chat_not_found',
    '987650000021@lid forbidden',
    '987650000022@lid chat_not_found',
  ]);
  expect(await targets(later)).toEqual([{ chat_id: '987650000022@lid', status: 'skipped', error_code: 'suppressed' }]);
});

test("a refusal that does not suppress lists nothing, and one account's pairs never reach another's list", async () => {
  const owner = await account();
  const other = await account();
  await learn(owner.accountId, [{ lid: '987650000031@lid', pn: '60100000031@s.whatsapp.net' }]);
  await new AccountRepository(db).chatRefused(owner.accountId, '60100000031', 'message_too_long', { suppress: false, reason: null }, now());
  await new AccountRepository(db).chatRefused(other.accountId, '60100000031', 'forbidden', { suppress: true, reason: null }, now());
  expect(await suppressed(owner.accountId)).toEqual([]);
  expect(await suppressed(other.accountId)).toEqual(['60100000031 forbidden']);
});

test('a chat of another kind (a group, an http chat id) is itself only', async () => {
  const owner = await account();
  await learn(owner.accountId, [{ lid: '987650000041@lid', pn: '60100000041@s.whatsapp.net' }]);
  await new OptOutRepository(db).optOut(owner.accountId, ['120363000000000041@g.us', 'chat-41'], now());
  expect(await suppressed(owner.accountId)).toEqual(['120363000000000041@g.us opt_out', 'chat-41 opt_out']);
});
