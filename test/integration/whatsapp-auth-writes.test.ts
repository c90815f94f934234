import { randomUUID } from 'node:crypto';
import { WhatsAppAuthRepository } from '@metronome/db';
import { countDbStatements } from '@metronome/observability';
import { seedAccount, seedTenant } from '../helpers/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// Every message a WhatsApp account sends writes its Signal session (auth state): the writes of
// all the accounts a sender holds that come while two statements are out share the next one,
// each account's rows as it asked, and one account's refused write fails only its own.
// Real PostgreSQL; statements counted as Kysely runs them.

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('wa_auth_writes');
});
afterAll(() => tdb.drop());

let statements = 0;
const now = new Date('2026-06-01T09:00:00Z');
const session = (text: string) => Buffer.from(text);

async function accounts(n: number): Promise<string[]> {
  const tenantId = await seedTenant(tdb.db);
  return Promise.all(Array.from({ length: n }, () => seedAccount(tdb.db, tenantId, { platform: 'whatsapp' })));
}

async function stored(accountId: string): Promise<Record<string, string>> {
  const rows = await tdb.db.selectFrom('whatsapp_auth').select(['kind', 'key_id', 'sealed']).where('account_id', '=', accountId).execute();
  return Object.fromEntries(rows.map((r) => [`${r.kind}/${r.key_id}`, r.sealed.toString()]));
}

test("ten accounts' session writes asked at once: three statements, each account's rows, a deletion among them", async () => {
  const ids = await accounts(10);
  const repo = new WhatsAppAuthRepository(countDbStatements(tdb.db, () => statements++));
  await repo.write(ids[0]!, [{ kind: 'pre-key', keyId: '7', sealed: session('a pre-key') }], now);
  statements = 0;
  await Promise.all(
    ids.map((id, i) =>
      repo.write(
        id,
        [{ kind: 'session', keyId: `6019${i}.0`, sealed: session(`session of ${i}`) }, ...(i === 0 ? [{ kind: 'pre-key', keyId: '7', sealed: null }] : [])],
        now,
      ),
    ),
  );
  // two go at once; the other eight, asked while they ran, together
  expect(statements).toBe(3);
  for (const [i, id] of ids.entries()) expect(await stored(id)).toEqual({ [`session/6019${i}.0`]: `session of ${i}` });
});

test("an account's refused write fails only itself: the others in its statement are written", async () => {
  const [kept, other] = await accounts(2);
  const repo = new WhatsAppAuthRepository(tdb.db);
  const gone = randomUUID();
  const results = await Promise.allSettled([
    repo.write(kept!, [{ kind: 'session', keyId: 'first', sealed: session('first') }], now),
    repo.write(kept!, [{ kind: 'session', keyId: 'second', sealed: session('second') }], now),
    repo.write(other!, [{ kind: 'session', keyId: 'x', sealed: session('x') }], now),
    repo.write(gone, [{ kind: 'session', keyId: 'y', sealed: session('y') }], now),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
  expect(repo.isTransient((results[3] as PromiseRejectedResult).reason)).toBe(false);
  expect(await stored(kept!)).toEqual({ 'session/first': 'first', 'session/second': 'second' });
  expect(await stored(other!)).toEqual({ 'session/x': 'x' });
});

test('a write that learns a LID pair is one statement: its rows and the pair, with no transaction around them', async () => {
  const [id] = await accounts(1);
  const repo = new WhatsAppAuthRepository(countDbStatements(tdb.db, () => statements++));
  statements = 0;
  await repo.write(
    id!,
    [
      { kind: 'lid-mapping', keyId: '60100000009', sealed: session('987650000009'), identity: { lid: '987650000009@lid', pn: '60100000009@s.whatsapp.net' } },
      { kind: 'session', keyId: '987650000009_1.0', sealed: session('the first session') },
    ],
    now,
  );
  // a first message to a new chat waits on this write: begin, two statements and commit were four round trips
  expect(statements).toBe(1);
  expect(await stored(id!)).toEqual({ 'lid-mapping/60100000009': '987650000009', 'session/987650000009_1.0': 'the first session' });
  const pairs = await tdb.db.selectFrom('whatsapp_identities').select(['lid', 'pn']).where('account_id', '=', id!).execute();
  expect(pairs).toEqual([{ lid: '987650000009@lid', pn: '60100000009@s.whatsapp.net' }]);
});
