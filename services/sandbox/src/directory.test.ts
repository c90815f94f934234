import type { FastifyInstance } from 'fastify';
import { buildSandbox } from './app.js';
import { defaultDirectory, type SandboxChat } from './directory.js';
import type { Limits } from './limits.js';

const open: Limits = { latencyMs: 0, maxPerMinute: 0, burst: 1, slowModeSeconds: 0, faultRate: 0, banHourlyCap: 0, banDailyCap: 0, banMinGapMs: 0 };
const auth = { authorization: 'Bearer key-of-acc-1-long-enough' };

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildSandbox({ config: { limits: open, seed: 7, directorySize: 30 }, clock: () => 1_700_000_000_000, sleep: async () => undefined });
});
afterEach(async () => {
  await app.close();
});

const list = async (cursor?: string, headers: Record<string, string> = auth) => {
  const res = await app.inject({ method: 'GET', url: `/v1/accounts/acc-1/chats${cursor === undefined ? '' : `?cursor=${cursor}`}`, headers });
  return { status: res.statusCode, body: res.json() as { items: SandboxChat[]; nextCursor: string | null; error?: string } };
};

/** Every page of the account's listing, in order. */
async function listAll(): Promise<SandboxChat[]> {
  const all: SandboxChat[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await list(cursor);
    expect(page.status).toBe(200);
    all.push(...page.body.items);
    if (page.body.nextCursor === null) return all;
    cursor = page.body.nextCursor;
  }
}

test('every account lists a default directory: chat-1…chat-N with titles, the same for the same seed', async () => {
  const chats = await listAll();
  expect(chats.map((c) => c.chatId)).toEqual(Array.from({ length: 30 }, (_, i) => `chat-${i + 1}`));
  expect(chats).toEqual(defaultDirectory(7, 30));
  expect(chats.every((c) => typeof c.title === 'string' && c.title.length > 3 && c.canSend)).toBe(true);
  expect(chats.filter((c) => c.kind === 'direct').map((c) => c.chatId)).toEqual(['chat-6', 'chat-12', 'chat-18', 'chat-24', 'chat-30']);
  expect(defaultDirectory(8, 30)).not.toEqual(chats);
});

test('the listing asks for the API key like every platform request', async () => {
  expect((await list()).status).toBe(200);
  expect((await list(undefined, { authorization: 'Bearer someone-elses-key-0000' })).status).toBe(401);
});

test('a replaced directory pages by pageSize, refuses sends to chats it cannot send to, and null answers 404', async () => {
  const chats: SandboxChat[] = [
    { chatId: 'g-1', title: 'Open Group', kind: 'group', memberCount: 5, canSend: true },
    { chatId: 'g-2', title: 'Announcements', kind: 'group', memberCount: 900, canSend: false },
    { chatId: 'd-1', title: null, kind: 'direct', memberCount: null, canSend: true },
  ];
  const put = await app.inject({ method: 'PUT', url: '/sandbox/accounts/acc-1/directory', payload: { chats, pageSize: 2 } });
  expect(put.json()).toEqual({ chats: 3, pageSize: 2 });
  const first = await list();
  expect(first.body.items).toEqual(chats.slice(0, 2));
  expect(first.body.nextCursor).not.toBeNull();
  expect((await list(first.body.nextCursor!)).body).toEqual({ items: chats.slice(2), nextCursor: null });
  expect((await list('nonsense')).status).toBe(400);

  const send = (chatId: string) =>
    app.inject({
      method: 'POST',
      url: '/v1/accounts/acc-1/messages',
      headers: { ...auth, 'idempotency-key': `k-${chatId}` },
      payload: { chatId, part: { type: 'text', text: 'hi' }, partIndex: 0, partCount: 1 },
    });
  expect((await send('g-1')).statusCode).toBe(200);
  const refused = await send('g-2');
  expect([refused.statusCode, refused.json().error]).toEqual([403, 'forbidden']);

  await app.inject({ method: 'PUT', url: '/sandbox/accounts/acc-1/directory', payload: { chats: null } });
  expect((await list()).status).toBe(404);
  expect((await send('g-2')).statusCode).toBe(200);

  await app.inject({ method: 'POST', url: '/sandbox/reset' });
  expect(await listAll()).toEqual(defaultDirectory(7, 30));
});

test('pages stay under 48 KiB of JSON whatever the titles', async () => {
  const chats = Array.from({ length: 1_000 }, (_, i) => ({ chatId: `c-${i}`, title: 'é'.repeat(200), kind: 'group' as const, memberCount: 1, canSend: true }));
  await app.inject({ method: 'PUT', url: '/sandbox/accounts/acc-1/directory', payload: { chats } });
  const page = await app.inject({ method: 'GET', url: '/v1/accounts/acc-1/chats', headers: auth });
  expect(page.rawPayload.length).toBeLessThanOrEqual(48 * 1024 + 100);
  expect((page.json() as { items: unknown[] }).items.length).toBeGreaterThan(50);
  expect(await listAll()).toHaveLength(1_000);
});
