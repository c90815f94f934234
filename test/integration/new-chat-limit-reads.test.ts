import type { KyselyPlugin } from 'kysely';
import { AccountCoolingRepository, NewChatLimitRepository } from '@metronome/db';
import { seedAccount, seedTenant } from '../helpers/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// A WhatsApp send reads its account's new-chat limits (NewChatLimitRepository) before each
// message. Limits that hold nothing are read once in `freeForMs`; a hold is read every time, so an
// operator's lift counts at once; a write through the repository, or one made while a read was
// out, leaves nothing kept. Real PostgreSQL; reads counted as Kysely runs them.

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('new_chat_limit_reads');
});
afterAll(() => tdb.drop());

let now = Date.parse('2026-06-01T09:00:00Z');
/** selects run; `hold` keeps the next select's answer until `release` */
const reads = { n: 0, hold: null as Promise<void> | null };
const plugin: KyselyPlugin = {
  transformQuery: (args) => {
    if (args.node.kind === 'SelectQueryNode') reads.n++;
    return args.node;
  },
  transformResult: async (args) => {
    const hold = reads.hold;
    reads.hold = null;
    await hold;
    return args.result;
  },
};
const repo = () => new NewChatLimitRepository(tdb.db.withPlugin(plugin), { freeForMs: 10_000, now: () => now });

async function account(): Promise<string> {
  return seedAccount(tdb.db, await seedTenant(tdb.db), { platform: 'whatsapp' });
}

beforeEach(() => {
  reads.n = 0;
});

test('limits that hold nothing are read once in ten seconds', async () => {
  const limits = repo();
  const id = await account();
  await limits.cap(id, { status: 'NONE', total: 50, used: 3, cycleEndsAt: null, toldAt: new Date(now) });
  for (let i = 0; i < 5; i++) expect(await limits.read(id)).toMatchObject({ cap: { status: 'NONE' } });
  expect(reads.n).toBe(1);
  now += 10_000;
  await limits.read(id);
  expect(reads.n).toBe(2);
});

test('forgotten (a socket new on this replica): the next read goes to PostgreSQL, so what another holder wrote counts', async () => {
  const limits = repo();
  const id = await account();
  expect(await limits.read(id)).toBeNull();
  // another replica held the socket meanwhile and recorded a 463
  await new NewChatLimitRepository(tdb.db).refused(id, new Date(now));
  expect(await limits.read(id)).toBeNull();
  limits.forget(id);
  expect(await limits.read(id)).toMatchObject({ refusedAt: new Date(now) });
  expect(reads.n).toBe(2);
});

test('a hold is read each time: an operator lift from another process counts at the next read', async () => {
  const limits = repo();
  const id = await account();
  await limits.read(id);
  await limits.refused(id, new Date(now));
  expect(await limits.read(id)).toMatchObject({ refusedAt: new Date(now) });
  expect(await limits.read(id)).toMatchObject({ refusedAt: new Date(now) });
  expect(reads.n).toBe(3);
  expect(await new AccountCoolingRepository(tdb.db).lift(id, null, new Date(now))).toBe(true);
  expect(await limits.read(id)).toBeNull();
});

test('a hold written while a read of nothing was out: the next read finds it', async () => {
  const limits = repo();
  const id = await account();
  let release: () => void = () => undefined;
  reads.hold = new Promise<void>((r) => (release = r));
  const out = limits.read(id);
  await new Promise((r) => setTimeout(r, 50));
  await limits.refused(id, new Date(now));
  release();
  expect(await out).toBeNull();
  expect(await limits.read(id)).toMatchObject({ refusedAt: new Date(now) });
});
