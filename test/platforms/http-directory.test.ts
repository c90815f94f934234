import type { ChatDirectorySink } from '@metronome/core';
import { ChatDirectoryRepository } from '@metronome/db';
import { DirectoryQueue, directoryJobId } from '@metronome/queue';
import type { Transport } from '@metronome/transports';
import { syncDirectory, type DirectoryJobDeps } from '../../services/sender/src/directory-job.js';
import { senderEvents } from '../../services/sender/src/sender-events.js';
import { driveRun, startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// The http platform's chat directory, end to end inside one process: the sender's sync job
// drives the real HttpTransport against the real sandbox over HTTP into real PostgreSQL.

type SandboxChat = { chatId: string; title: string | null; kind: 'group' | 'direct'; memberCount: number | null; canSend: boolean };

let h: SenderHarness;
let directory: ChatDirectoryRepository;
let deps: DirectoryJobDeps;
let queue: DirectoryQueue;
beforeEach(async () => {
  h = await startSenderHarness({});
  directory = new ChatDirectoryRepository(h.tdb.db);
  // the senders' directory queue, on the harness's Redis prefix
  queue = new DirectoryQueue(h.redis, h.deps.queue.queue.opts.prefix!);
  deps = {
    directory,
    transports: h.deps.transports,
    secretsKeys: h.deps.secretsKeys,
    clock: h.clock,
    events: senderEvents(),
    draining: new AbortController().signal,
    retryAt: (accountId, until) => queue.retryAt(accountId, until, h.clock.now()),
  };
});
afterEach(async () => {
  await queue.close();
  await h.close();
});

const entries = async (accountId: string) =>
  (await directory.list(accountId, { limit: 100_000 })).map(({ chatId, title, kind, memberCount, canSend }) => ({ chatId, title, kind, memberCount, canSend }));
const byId = (chats: { chatId: string }[]) => [...chats].sort((a, b) => a.chatId.localeCompare(b.chatId));

test("a sync copies the sandbox's default directory, page after page, and says ok with its size", async () => {
  const { accountId, externalId } = await h.seedAccount();
  await syncDirectory(deps, accountId);
  const { chats } = await h.sandboxGet<{ chats: SandboxChat[] }>(`/sandbox/accounts/${externalId}/directory`);
  expect(chats).toHaveLength(60);
  expect(byId(await entries(accountId))).toEqual(byId(chats));
  expect(await directory.syncOf(accountId)).toMatchObject({ status: 'ok', size: 60, reason: null });
});

test('a directory of many pages lands whole; a chat gone from it is marked left; its forbidden chat cannot send', async () => {
  const { accountId, externalId } = await h.seedAccount();
  const chats: SandboxChat[] = Array.from({ length: 1_234 }, (_, i) => ({
    chatId: `g-${i}`,
    title: `Group ${i}`,
    kind: 'group',
    memberCount: i,
    canSend: i !== 7,
  }));
  await h.sandboxPut(`/sandbox/accounts/${externalId}/directory`, { chats, pageSize: 100 });
  await syncDirectory(deps, accountId);
  expect(byId(await entries(accountId))).toEqual(byId(chats));
  expect((await directory.list(accountId, { limit: 10, canSend: false }))[0]).toMatchObject({ chatId: 'g-7', cannotSendReason: 'forbidden' });

  await h.sandboxPut(`/sandbox/accounts/${externalId}/directory`, { chats: chats.slice(1) });
  await syncDirectory(deps, accountId);
  expect((await directory.list(accountId, { limit: 10, query: 'g-0' }))[0]).toMatchObject({ chatId: 'g-0', canSend: false, cannotSendReason: 'left' });
  expect(await directory.syncOf(accountId)).toMatchObject({ status: 'ok', size: 1_234 });
});

test('a platform answering 404 has no directory (unsupported); a refused API key fails the sync and keeps the entries', async () => {
  const { accountId, externalId } = await h.seedAccount();
  await syncDirectory(deps, accountId);
  await h.sandboxPut(`/sandbox/accounts/${externalId}/directory`, { chats: null });
  await syncDirectory(deps, accountId);
  expect(await directory.syncOf(accountId)).toMatchObject({ status: 'unsupported', reason: 'the platform has no chat directory', size: 60 });

  await h.sandboxPut(`/sandbox/accounts/${externalId}`, { unauthorized: true });
  await h.sandboxPut(`/sandbox/accounts/${externalId}/directory`, { chats: [] });
  await syncDirectory(deps, accountId);
  const state = await directory.syncOf(accountId);
  expect(state?.status).toBe('failed');
  expect(state?.reason).toMatch(/401/);
  expect(await entries(accountId)).toHaveLength(60);
});

test('a platform without a listing is unsupported', async () => {
  const { accountId } = await h.seedAccount();
  await syncDirectory({ ...deps, transports: { http: { ...h.deps.transports['http']!, syncDirectory: undefined } as never } }, accountId);
  expect(await directory.syncOf(accountId)).toMatchObject({ status: 'unsupported', reason: 'the http platform cannot list chats' });
});

test('a send the platform refuses as forbidden marks the chat’s entry cannot send, reason forbidden', async () => {
  const { tenantId, accountId, externalId } = await h.seedAccount();
  const chats: SandboxChat[] = [
    { chatId: 'open', title: 'Open', kind: 'group', memberCount: 3, canSend: true },
    { chatId: 'closed', title: 'Closed', kind: 'group', memberCount: 3, canSend: true },
  ];
  await h.sandboxPut(`/sandbox/accounts/${externalId}/directory`, { chats });
  await syncDirectory(deps, accountId);
  // the platform changed its mind since the sync: sends to `closed` are refused
  await h.sandboxPut(`/sandbox/accounts/${externalId}/directory`, { chats: [chats[0], { ...chats[1], canSend: false }] });
  const runId = await h.seedRun({ tenantId, accountId, targets: ['open', 'closed'], parts: [{ type: 'text', text: 'hi' }] });
  await driveRun(h, runId);
  expect((await h.targets(runId)).map((t) => [t.chat_id, t.status, t.error_code])).toEqual([
    ['closed', 'failed', 'forbidden'],
    ['open', 'sent', null],
  ]);
  const listed = await directory.list(accountId, { limit: 10 });
  expect(listed.map((e) => [e.chatId, e.canSend, e.cannotSendReason])).toEqual([
    ['closed', false, 'forbidden'],
    ['open', true, null],
  ]);
});

test('a platform that asks to slow down leaves the sync backing off, queued again for its until', async () => {
  const { accountId } = await h.seedAccount();
  const until = new Date(h.clock.now() + 90_000);
  // a fake platform's transport that answers every listing with "slow down"
  const slowDown: Pick<Transport, 'syncDirectory'> = {
    syncDirectory: async (account, sink: ChatDirectorySink) =>
      sink.syncState(account.id, { status: 'backing_off', until, reason: 'rate-overlimit' }, new Date(h.clock.now())),
  };
  await syncDirectory({ ...deps, transports: { http: slowDown as Transport } }, accountId);
  expect(await directory.syncOf(accountId)).toMatchObject({ status: 'backing_off', until, reason: 'rate-overlimit' });
  const retry = await queue.queue.getJob(`${directoryJobId(accountId)}-at-${until.getTime()}`);
  expect(retry?.data).toEqual({ accountId });
  expect(retry?.opts.delay).toBe(90_000);
});
