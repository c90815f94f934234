// The HTTP transport against a real sandbox process (the fake platform): chat ids of any
// script reach the platform, and a request that cannot be built is never `unknown`.
import { randomUUID } from 'node:crypto';
import { startService, type ServiceProcess } from '@metronome/testkit';
import { HttpTransport, encodeIdempotencyKey, decodeIdempotencyKey, type OutgoingMessage, type TransportAccount } from '@metronome/transports';

interface Recorded {
  account: string;
  chatId: string;
  idempotencyKey: string;
  part: { type: string; text?: string };
}

let sandbox: ServiceProcess;
let base: string;
let transport: HttpTransport;

beforeAll(async () => {
  sandbox = startService('sandbox', 'services/sandbox/dist/main.js', { SANDBOX_PORT: '0' });
  base = (await sandbox.waitForLog((l) => l['msg'] === 'sandbox listening'))['url'] as string;
  transport = new HttpTransport({ baseUrl: base, timeoutMs: 5_000 });
});

afterAll(async () => {
  await transport?.close();
  await sandbox?.stop();
});

const get = async <T>(path: string): Promise<T> => (await (await fetch(`${base}${path}`)).json()) as T;

const account = (externalId: string): TransportAccount => ({ id: randomUUID(), externalId, credentials: { apiKey: 'sandbox-api-key-0001' } });

const textTo = (runId: string, chatId: string, text: string): OutgoingMessage => ({
  chatId,
  part: { type: 'text', text },
  partIndex: 0,
  partCount: 1,
  idempotencyKey: `${runId}:${chatId}:0`,
});

const CHAT_IDS = ['Привет, мир', '🎉 party 🎊', '群组-一号', 'مرحبا', 'naïve café', '100% off: a b', '👨‍👩‍👧‍👦', '群'.repeat(256)];

test.each(CHAT_IDS.map((c) => [c.length > 40 ? `${c.slice(0, 8)}… (${c.length} characters)` : c, c]))(
  'a chat id %s is delivered once and recorded as it is, under its encoded key',
  async (_name, chatId) => {
    const acc = `ids-${randomUUID()}`;
    const runId = randomUUID();
    const message = textTo(runId, chatId, 'hello');
    const result = await transport.send(account(acc), message);
    expect(result).toMatchObject({ kind: 'delivered', messageId: expect.stringMatching(/^msg-/) });

    // A repeat of the same send is the same key to the platform: deduplicated, not delivered twice.
    expect(await transport.send(account(acc), message)).toEqual(result);

    const { items } = await get<{ items: Recorded[] }>(`/sandbox/messages?account=${encodeURIComponent(acc)}`);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ chatId, part: { type: 'text', text: 'hello' } });
    expect(items[0]!.idempotencyKey).toBe(encodeIdempotencyKey(message.idempotencyKey));
    expect(decodeIdempotencyKey(items[0]!.idempotencyKey)).toBe(`${runId}:${chatId}:0`);
    const duplicates = await get<{ items: { account: string; chatId: string }[] }>('/sandbox/duplicates');
    expect(duplicates.items.filter((d) => d.account === acc)).toEqual([expect.objectContaining({ chatId })]);
  },
);

test('two chat ids that differ only where the encoding escapes get different keys and both arrive', async () => {
  const acc = `ids-${randomUUID()}`;
  const runId = randomUUID();
  for (const chatId of ['a b', 'a%20b', '\ud800', '\udc00']) {
    expect((await transport.send(account(acc), textTo(runId, chatId, chatId))).kind).toBe('delivered');
  }
  const { items } = await get<{ items: Recorded[] }>(`/sandbox/messages?account=${encodeURIComponent(acc)}`);
  expect(items.map((m) => m.chatId)).toEqual(['a b', 'a%20b', '\ud800', '\udc00']);
  expect(new Set(items.map((m) => m.idempotencyKey)).size).toBe(4);
});

describe('a request that cannot be built is never unknown', () => {
  test('a media content type node will not put in a header: a failure (request_invalid), nothing sent', async () => {
    const acc = `ids-${randomUUID()}`;
    const result = await transport.prepareMedia(account(acc), {
      mediaId: randomUUID(),
      contentType: 'image/png; name=картинка',
      sha256: 'a'.repeat(64),
      filename: null,
      bytes: Buffer.from('x'),
    });
    expect(result).toEqual({ ok: false, result: { kind: 'rejected', code: 'request_invalid', message: expect.any(String) } });
    expect((await get<{ uploads: { account: string }[] }>('/sandbox/stats')).uploads.filter((u) => u.account === acc)).toEqual([]);
  });

  test('an account id that is no valid URI component: a retry, never ambiguous, nothing sent', async () => {
    const acc = `ids-\ud800-${randomUUID()}`;
    const result = await transport.send(account(acc), textTo(randomUUID(), 'chat-1', 'hello'));
    expect(result).toMatchObject({ kind: 'retriable', code: 'request_not_built' });
    const { items } = await get<{ items: Recorded[] }>('/sandbox/messages');
    expect(items.filter((m) => m.account.startsWith('ids-\ufffd') || m.account === acc)).toEqual([]);
  });
});
