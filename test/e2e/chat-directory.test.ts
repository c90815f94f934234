import { api, createHttpAccount, createTenant, sandbox, sharedStackForFile } from '../helpers/stack.js';
import { openEventStream } from '../helpers/sse-client.js';
import { eventually } from '../helpers/test-env.js';

// The chat directory end to end, each service a process: an http account made through the API
// syncs its chats from the sandbox by itself (a sender runs the sync), its progress reaches
// /v1/events, and a send the sandbox forbids marks the chat's entry.

const stack = sharedStackForFile();

type Chat = { chatId: string; title: string | null; kind: string; memberCount: number | null; canSend: boolean };
const ACCOUNT = 'directory-acc';

const putDirectory = async (body: unknown) => {
  const res = await fetch(`${stack.sandboxUrl}/sandbox/accounts/${ACCOUNT}/directory`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
};

test('a new http account fills its directory from the sandbox; a forbidden send marks its entry; a platform without a directory says so', async () => {
  const token: string = (await createTenant(stack, 'Directory')).body.token;
  const events = await openEventStream(stack.apiUrl, token);
  try {
    const created = await createHttpAccount(stack, token, { name: 'D', externalId: ACCOUNT, maxSendPerMinute: 6000 });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    const account = await eventually(
      'the first sync to end',
      async () => {
        const a = (await api(stack, 'GET', `/v1/accounts/${id}`, token)).body;
        return a.directory.status === 'ok' ? a : null;
      },
      30_000,
      100,
    );
    expect(account.directory).toMatchObject({ status: 'ok', size: 60, reason: null });

    // the directory, read through the API page by page, is the sandbox's
    const listed: Chat[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: Chat[]; nextCursor: string | null } } = await api(
        stack,
        'GET',
        `/v1/accounts/${id}/chats?limit=25${cursor ? `&cursor=${cursor}` : ''}`,
        token,
      );
      expect(page.status).toBe(200);
      listed.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor);
    const { chats } = await sandbox<{ chats: Chat[] }>(stack, `/sandbox/accounts/${ACCOUNT}/directory`);
    const strip = (c: Chat) => ({ chatId: c.chatId, title: c.title, kind: c.kind, memberCount: c.memberCount, canSend: c.canSend });
    const byId = (a: Chat, b: Chat) => a.chatId.localeCompare(b.chatId);
    expect(listed.map(strip).sort(byId)).toEqual(chats.map(strip).sort(byId));
    const directoryEvents = () => events.events.filter((e) => e.event === 'directory' && e.data.accountId === id);
    await eventually('the ok event', async () => directoryEvents().some((e) => e.data.status === 'ok'), 10_000);
    expect(directoryEvents().at(-1)!.data).toEqual({ accountId: id, status: 'ok', synced: 60, size: 60, until: null, reason: null });

    // the platform now refuses the account in chat-3 (the directory was synced before it did)
    await putDirectory({ chats: chats.map((c) => (c.chatId === 'chat-3' ? { ...c, canSend: false } : c)) });
    const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
      accountId: id,
      name: 'to the directory',
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: 'hello' }],
      targets: ['chat-1', 'chat-3'],
    });
    expect(campaign.status).toBe(201);
    const forbidden = await eventually(
      'chat-3 to be marked',
      async () => {
        const page = (await api(stack, 'GET', `/v1/accounts/${id}/chats?canSend=false`, token)).body.items as { chatId: string }[];
        return page.length > 0 ? page : null;
      },
      30_000,
      100,
    );
    expect(forbidden).toEqual([expect.objectContaining({ chatId: 'chat-3', canSend: false, cannotSendReason: 'forbidden' })]);
    const title = chats.find((c) => c.chatId === 'chat-1')!.title!;
    const found = (await api(stack, 'GET', `/v1/accounts/${id}/chats?query=${encodeURIComponent(title.toUpperCase())}`, token)).body.items as Chat[];
    expect(found.map((c) => c.chatId)).toContain('chat-1');

    // a platform answering 404 to the listing has no directory; the entries stay
    await putDirectory({ chats: null });
    const sync = await api(stack, 'POST', `/v1/accounts/${id}/chats/sync`, token);
    expect([sync.status, sync.body.status]).toEqual([202, 'syncing']);
    const unsupported = await eventually(
      'the sync to end',
      async () => {
        const d = (await api(stack, 'GET', `/v1/accounts/${id}`, token)).body.directory;
        return d.status === 'unsupported' ? d : null;
      },
      30_000,
      100,
    );
    expect(unsupported).toMatchObject({ reason: 'the platform has no chat directory', size: 60 });
    await eventually('the unsupported event', async () => directoryEvents().some((e) => e.data.status === 'unsupported'), 10_000);
  } finally {
    events.close();
  }
}, 90_000);
