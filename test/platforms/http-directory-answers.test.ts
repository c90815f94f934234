import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatDirectorySink, DirectoryChat, DirectorySyncState } from '@metronome/core';
import { HttpTransport, type TransportAccount } from '@metronome/transports';

// What the http transport's directory listing does with what a platform answers, against a fake
// platform (a plain HTTP server answering what the test tells it) into a recording sink: the API
// key and the cursor on every page, and a clear `failed` for every answer it cannot use.

type Behaviour = (req: http.IncomingMessage, res: http.ServerResponse) => void;

let server: http.Server;
let behaviour: Behaviour;
let transport: HttpTransport;
const seen: { method: string; url: string; authorization: string | undefined }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
    behaviour(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  transport = new HttpTransport({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/base`, timeoutMs: 2_000 });
});
afterAll(async () => {
  await transport.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen.length = 0;
});

const KEY = 'directory-api-key-00000001';
const account: TransportAccount = { id: 'acc-id', externalId: 'ext/1', credentials: { apiKey: KEY } };

/** A sink that records what the transport wrote (a fake of the repository). */
function recordingSink() {
  const states: DirectorySyncState[] = [];
  const listings: DirectoryChat[][] = [];
  const sink: ChatDirectorySink = {
    replaceAll: async (_a, chats) => void listings.push(chats),
    upsert: async () => undefined,
    patch: async () => undefined,
    syncState: async (_a, state) => void states.push(state),
  };
  return { sink, states, listings };
}

const json = (status: number, body: unknown) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

test('pages are asked for with GET, the API key and the cursor, under the base, until nextCursor is null', async () => {
  behaviour = (req, res) => {
    const cursor = new URL(req.url ?? '', 'http://x').searchParams.get('cursor');
    const page =
      cursor === null
        ? { items: [{ chatId: 'a', title: 'A', kind: 'group', memberCount: 3, canSend: true }], nextCursor: 'p 2' }
        : { items: [{ chatId: 'b', title: null, kind: 'direct', memberCount: null, canSend: false }], nextCursor: null };
    json(200, page)(req, res);
  };
  const r = recordingSink();
  await transport.syncDirectory(account, r.sink);
  expect(seen.map((s) => [s.method, s.url, s.authorization])).toEqual([
    ['GET', '/base/v1/accounts/ext%2F1/chats', `Bearer ${KEY}`],
    ['GET', '/base/v1/accounts/ext%2F1/chats?cursor=p+2', `Bearer ${KEY}`],
  ]);
  expect(r.listings).toEqual([
    [
      { chatId: 'a', title: 'A', kind: 'group', memberCount: 3, canSend: true, cannotSendReason: null },
      { chatId: 'b', title: null, kind: 'direct', memberCount: null, canSend: false, cannotSendReason: 'forbidden' },
    ],
  ]);
  expect(r.states).toEqual([
    { status: 'syncing', synced: 0 },
    { status: 'syncing', synced: 1 },
    { status: 'ok', size: 2 },
  ]);
});

test.each<[string, DirectorySyncState['status'], RegExp, Behaviour]>([
  ['404', 'unsupported', /no chat directory/, json(404, { error: 'not_found' })],
  ['401', 'failed', /API key \(401\)/, json(401, { error: 'unauthorized' })],
  ['500', 'failed', /answered 500/, json(500, { error: 'internal_error' })],
  ['not JSON', 'failed', /cannot read/, (_q, res) => res.end('<html>')],
  ['an item without canSend', 'failed', /cannot read/, json(200, { items: [{ chatId: 'a', title: 'A', kind: 'group', memberCount: 1 }], nextCursor: null })],
  [
    'a chat id with a newline',
    'failed',
    /cannot read/,
    json(200, { items: [{ chatId: 'a\nb', title: 'A', kind: 'group', memberCount: 1, canSend: true }], nextCursor: null }),
  ],
  ['an answer over 64 KiB', 'failed', /more than 65536 bytes/, json(200, { items: [], nextCursor: null, pad: 'x'.repeat(70_000) })],
  [
    'a platform that pages without end',
    'failed',
    /more than 100000 chats or 2000 pages/,
    (req, res) => json(200, { items: [], nextCursor: `n${seen.length}` })(req, res),
  ],
])('%s: the sync is %s, saying why, and the directory is left as it was', async (_what, status, reason, answer) => {
  behaviour = answer;
  const r = recordingSink();
  await transport.syncDirectory(account, r.sink);
  const last = r.states.at(-1)!;
  expect(last.status).toBe(status);
  expect('reason' in last && last.reason).toMatch(reason);
  expect(r.listings).toEqual([]);
});

test('an account without an API key asks the platform nothing', async () => {
  const r = recordingSink();
  await transport.syncDirectory({ ...account, credentials: null }, r.sink);
  expect(seen).toEqual([]);
  expect(r.states).toEqual([{ status: 'failed', reason: expect.stringContaining('no API key') }]);
});
