import pg from 'pg';
import type { DirectoryChat } from '@metronome/core';
import { AccountRepository, ChatDirectoryRepository } from '@metronome/db';
import { seedAccount, seedTenant } from '../helpers/seed.js';
import { createTestDatabase, eventually, type TestDatabase } from '../helpers/test-env.js';

// The chat directory's repository (migrations/0016) on real PostgreSQL: complete listings,
// events' upserts and patches, search with folding, stable paging, and refused sends.

let tdb: TestDatabase;
let repo: ChatDirectoryRepository;
let accountId: string;
let tenantId: string;
beforeAll(async () => {
  tdb = await createTestDatabase('directory');
  repo = new ChatDirectoryRepository(tdb.db);
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  tenantId = await seedTenant(tdb.db);
  accountId = await seedAccount(tdb.db, tenantId);
});

const T1 = new Date('2026-03-01T10:00:00.000Z');
const T2 = new Date('2026-03-01T11:00:00.000Z');
const group = (chatId: string, title: string | null, extra: Partial<DirectoryChat> = {}): DirectoryChat => ({
  chatId,
  title,
  kind: 'group',
  memberCount: 10,
  canSend: true,
  cannotSendReason: null,
  ...extra,
});
const all = (q: Partial<Parameters<ChatDirectoryRepository['list']>[1]> = {}) => repo.list(accountId, { limit: 1000, ...q });
const byId = async () => new Map((await all()).map((e) => [e.chatId, e]));

test('a complete listing upserts its entries and marks those it lacks as left, never deleting, all stamped with its time', async () => {
  await repo.replaceAll(accountId, [group('a', 'Alpha'), group('b', 'Beta'), group('c', 'Gamma', { canSend: false, cannotSendReason: 'announce_only' })], T1);
  await repo.replaceAll(accountId, [group('a', 'Alpha renamed', { memberCount: 11 }), group('d', 'Delta')], T2);
  const entries = await byId();
  expect([...entries.keys()].sort()).toEqual(['a', 'b', 'c', 'd']);
  expect(entries.get('a')).toMatchObject({ title: 'Alpha renamed', memberCount: 11, canSend: true, cannotSendReason: null, lastSyncAt: T2 });
  expect(entries.get('b')).toMatchObject({ title: 'Beta', canSend: false, cannotSendReason: 'left', lastSyncAt: T2 });
  // one that already could not send keeps its reason
  expect(entries.get('c')).toMatchObject({ canSend: false, cannotSendReason: 'announce_only', lastSyncAt: T2 });
  // a listing that names a left chat again gives it back
  await repo.replaceAll(accountId, [group('b', 'Beta')], T2);
  expect((await byId()).get('b')).toMatchObject({ canSend: true, cannotSendReason: null });
});

test('a listing of 5,000 entries (several statements) lands whole, and a repeated chat id keeps its last entry', async () => {
  const chats = Array.from({ length: 5_000 }, (_, i) => group(`chat-${i}`, `Chat ${i}`));
  await repo.replaceAll(accountId, [...chats, group('chat-7', 'Seven again')], T1);
  const entries = await all({ limit: 10_000 });
  expect(entries).toHaveLength(5_000);
  expect(entries.find((e) => e.chatId === 'chat-7')?.title).toBe('Seven again');
});

test('the longest titles and chat ids fit (cut to 256 code points, never half a character), and page on', async () => {
  const emoji = '😀'.repeat(1_000);
  const ligatures = '\ufdfa'.repeat(300); // each folds (NFKD) to 18 characters
  const longId = '😀'.repeat(256);
  await repo.replaceAll(accountId, [group(longId, emoji), group('b', ligatures), group('c', 'Café')], T1);
  const entries = await all({ limit: 2 });
  const byChat = new Map((await all()).map((e) => [e.chatId, e]));
  expect(byChat.get(longId)?.title).toBe('😀'.repeat(256));
  expect(byChat.get('b')?.title).toBe('\ufdfa'.repeat(256));
  const rest = await all({ limit: 2, after: { sortKey: entries[1]!.sortKey, chatId: entries[1]!.chatId } });
  expect([...entries, ...rest].map((e) => e.chatId).sort()).toEqual([longId, 'b', 'c'].sort());
  expect((await all({ query: '😀😀' })).map((e) => e.chatId)).toEqual([longId]);
});

test('upsert adds and replaces entries; patch changes the fields given; the sync state counts the size', async () => {
  await repo.syncState(accountId, { status: 'syncing', synced: 0 }, T1);
  await repo.upsert(accountId, [group('a', 'Alpha'), group('b', 'Beta')], T1);
  expect((await repo.syncOf(accountId))?.size).toBe(2);
  await repo.upsert(accountId, [group('b', 'Beta two'), group('c', 'Gamma')], T2);
  expect((await repo.syncOf(accountId))?.size).toBe(3);
  await repo.patch(accountId, 'a', { title: 'Ålpha Café' }, T2);
  await repo.patch(accountId, 'b', { canSend: false, cannotSendReason: 'removed' }, T2);
  await repo.patch(accountId, 'c', { canSend: false }, T2);
  await repo.patch(accountId, 'nope', { title: 'x' }, T2);
  const entries = await byId();
  expect(entries.size).toBe(3);
  expect(entries.get('a')).toMatchObject({ title: 'Ålpha Café', canSend: true, lastSyncAt: T2 });
  expect(entries.get('b')).toMatchObject({ title: 'Beta two', canSend: false, cannotSendReason: 'removed' });
  expect(entries.get('c')).toMatchObject({ canSend: false, cannotSendReason: 'forbidden' });
  expect((await all({ query: 'cafe' })).map((e) => e.chatId)).toEqual(['a']);
  await repo.patch(accountId, 'b', { canSend: true }, T2);
  expect((await byId()).get('b')).toMatchObject({ canSend: true, cannotSendReason: null });
});

test('search: title or chat id contains the query, any case, accents folded; like wildcards are plain characters', async () => {
  await repo.replaceAll(
    accountId,
    [
      group('g-1', 'Café Lumière Regulars'),
      group('g-2', 'CAFE owners'),
      group('g-3', 'São Paulo Runners'),
      group('120363041234567890@g.us', 'Parents'),
      group('g-5', '100% Club'),
      group('g-6', 'A_B testers'),
      group('g-7', null),
    ],
    T1,
  );
  const ids = async (query: string) => (await all({ query })).map((e) => e.chatId).sort();
  expect(await ids('café')).toEqual(['g-1', 'g-2']);
  expect(await ids('LUMIERE')).toEqual(['g-1']);
  expect(await ids('sao paulo')).toEqual(['g-3']);
  expect(await ids('1234567')).toEqual(['120363041234567890@g.us']);
  expect(await ids('100%')).toEqual(['g-5']);
  expect(await ids('%')).toEqual(['g-5']);
  expect(await ids('a_b')).toEqual(['g-6']);
  expect(await ids('g-7')).toEqual(['g-7']);
  // the title and the id are matched apart: no query spans the end of one and the start of the other
  expect(await ids('parents120')).toEqual([]);
});

test('pages in title order (folded), then chat id, are stable, and filter by kind and canSend', async () => {
  const chats = [
    ...Array.from({ length: 25 }, (_, i) => group(`g-${String(i).padStart(2, '0')}`, i % 2 ? 'Same Title' : `Title ${String.fromCharCode(90 - i)}`)),
    { chatId: 'd-1', title: 'ébène', kind: 'direct' as const, memberCount: 2, canSend: false, cannotSendReason: 'blocked' as const },
    { chatId: 'd-2', title: 'Zed', kind: 'direct' as const, memberCount: 2, canSend: true, cannotSendReason: null },
  ];
  await repo.replaceAll(accountId, chats, T1);
  const whole = await all();
  const paged = [];
  let after: { sortKey: string; chatId: string } | undefined;
  for (;;) {
    const page = await all({ limit: 4, after });
    paged.push(...page);
    if (page.length < 4) break;
    const last = page[page.length - 1]!;
    after = { sortKey: last.sortKey, chatId: last.chatId };
  }
  expect(paged.map((e) => e.chatId)).toEqual(whole.map((e) => e.chatId));
  expect(whole).toHaveLength(27);
  // ébène sorts as ebene, before the S and T titles; equal titles by chat id
  expect(whole[0]!.chatId).toBe('d-1');
  const same = whole.filter((e) => e.title === 'Same Title').map((e) => e.chatId);
  expect(same).toEqual([...same].sort());
  expect((await all({ kind: 'direct' })).map((e) => e.chatId)).toEqual(['d-1', 'd-2']);
  expect((await all({ canSend: false })).map((e) => e.chatId)).toEqual(['d-1']);
  expect((await all({ kind: 'direct', canSend: true })).map((e) => e.chatId)).toEqual(['d-2']);
});

test('a refused send marks the chat’s entry in the statement that suppresses it, and creates no entry', async () => {
  const accounts = new AccountRepository(tdb.db);
  await repo.replaceAll(accountId, [group('a', 'Alpha'), group('b', 'Beta')], T1);
  await accounts.chatRefused(accountId, 'a', 'forbidden', { suppress: true, reason: 'forbidden' }, T2);
  await accounts.chatRefused(accountId, 'b', 'group_left', { suppress: false, reason: 'removed' }, T2);
  await accounts.chatRefused(accountId, 'zz', 'chat_not_found', { suppress: true, reason: 'not_found' }, T2);
  const entries = await byId();
  expect(entries.get('a')).toMatchObject({ canSend: false, cannotSendReason: 'forbidden', lastSyncAt: T1 });
  expect(entries.get('b')).toMatchObject({ canSend: false, cannotSendReason: 'removed' });
  expect(entries.has('zz')).toBe(false);
  const suppressed = (await accounts.suppressions(accountId, { limit: 10 })).map((s) => [s.chatId, s.reason]);
  expect(suppressed).toEqual([
    ['a', 'forbidden'],
    ['zz', 'chat_not_found'],
  ]);
});

test('every sync state change is a directory event for the account’s tenant; the account shows it', async () => {
  const client = new pg.Client({ connectionString: tdb.url });
  await client.connect();
  const events: Record<string, unknown>[] = [];
  client.on('notification', (msg) => {
    const v = JSON.parse(msg.payload ?? '{}') as Record<string, unknown>;
    if (v['type'] === 'directory' && v['accountId'] === accountId) events.push(v);
  });
  await client.query('listen metronome_run_events');
  try {
    await repo.requestSync(accountId, T1);
    await repo.syncState(accountId, { status: 'syncing', synced: 200 }, T1);
    await repo.replaceAll(accountId, [group('a', 'Alpha'), group('b', 'Beta')], T2);
    await repo.syncState(accountId, { status: 'ok', size: 2 }, T2);
    await repo.syncState(accountId, { status: 'backing_off', until: T2, reason: 'rate-overlimit' }, T2);
    await eventually('the backing_off event', async () => events.at(-1)?.['status'] === 'backing_off');
    expect(events.map((e) => e['status'])).toEqual(['syncing', 'syncing', 'syncing', 'ok', 'backing_off']);
    expect(events[1]).toEqual({ type: 'directory', accountId, tenantId, status: 'syncing', synced: 200, size: 0 });
    expect(events[3]).toEqual({ type: 'directory', accountId, tenantId, status: 'ok', synced: 2, size: 2 });
    expect(events[4]).toEqual({
      type: 'directory',
      accountId,
      tenantId,
      status: 'backing_off',
      synced: 0,
      size: 2,
      reason: 'rate-overlimit',
      until: T2.toISOString(),
    });
    const account = await new AccountRepository(tdb.db).find(accountId, tenantId);
    expect(account?.directory).toEqual({ status: 'backing_off', synced: 0, size: 2, until: T2, reason: 'rate-overlimit', lastSyncAt: T2, requestedAt: T1 });
  } finally {
    await client.end();
  }
});
