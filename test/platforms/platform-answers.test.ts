import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpTransport, TelegramTransport, type OutgoingMessage, type TransportAccount } from '@metronome/transports';

// What the transports do with what a platform answers, against a fake platform (a plain HTTP
// server that answers whatever the test tells it): they send the account's credentials on every
// request, read at most 64 KiB of an answer (a 1 MiB answer is cut off, never buffered whole),
// and no result carries a credential, whatever the platform quotes back.

interface Seen {
  url: string;
  authorization: string | undefined;
}

type Behaviour = (req: http.IncomingMessage, res: http.ServerResponse) => void;

let server: http.Server;
let base: string;
let behaviour: Behaviour;
const seen: Seen[] = [];
/** for streamed answers: whether the fake wrote its whole body before the client hung up */
const streams: { complete: boolean }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      behaviour(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
  streams.length = 0;
});

const MiB = 1024 * 1024;

/** 1 MiB in 16 writes, 5 ms apart, without Content-Length: the client has to notice the size itself. */
const streamMiB =
  (status: number): Behaviour =>
  (_req, res) => {
    const record = { complete: false };
    streams.push(record);
    res.writeHead(status, { 'content-type': 'application/json' });
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const next = () => {
      if (res.destroyed) return;
      if (sent >= MiB) {
        record.complete = true;
        return void res.end();
      }
      sent += chunk.length;
      res.write(chunk);
      setTimeout(next, 5);
    };
    next();
  };
/** 1 MiB at once, with its Content-Length. */
const declaredMiB =
  (status: number): Behaviour =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(MiB) });
    res.end(Buffer.alloc(MiB, 'a'));
  };

const API_KEY = 'platform-answers-key-0001';
const httpAccount: TransportAccount = { id: 'a1', externalId: 'acc-1', credentials: { apiKey: API_KEY } };
const BOT_TOKEN = '7012345678:AAH-platform_answers_probe_ZZZZZZZZ';
const botAccount: TransportAccount = { id: 'b1', externalId: null, credentials: { botToken: BOT_TOKEN } };
const text = (chatId = 'chat-1'): OutgoingMessage => ({
  chatId,
  part: { type: 'text', text: 'hi' },
  partIndex: 0,
  partCount: 1,
  idempotencyKey: `run:${chatId}:0`,
});
const media = { mediaId: 'm', contentType: 'image/png', sha256: 'x', filename: null, bytes: Buffer.from('png') };

describe('http transport', () => {
  const transport = () => new HttpTransport({ baseUrl: base, timeoutMs: 5_000 });

  test('every request, message and media, carries Authorization: Bearer <apiKey>', async () => {
    behaviour = (req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(req.url!.endsWith('/media') ? '{"mediaRef":"r1"}' : '{"messageId":"m1"}');
    const t = transport();
    expect(await t.prepareMedia(httpAccount, media)).toMatchObject({ ok: true, ref: 'r1' });
    expect(await t.send(httpAccount, text())).toEqual({ kind: 'delivered', messageId: 'm1' });
    await t.close();
    expect(seen).toEqual([
      { url: '/v1/accounts/acc-1/media', authorization: `Bearer ${API_KEY}` },
      { url: '/v1/accounts/acc-1/messages', authorization: `Bearer ${API_KEY}` },
    ]);
  });

  test('an account without an API key sends nothing and is account-unavailable', async () => {
    behaviour = (_req, res) => res.writeHead(200).end('{"messageId":"m1"}');
    const t = transport();
    expect(await t.send({ ...httpAccount, credentials: null }, text())).toMatchObject({ kind: 'account-unavailable', code: 'api_key_missing' });
    expect(await t.prepareMedia({ ...httpAccount, credentials: {} }, media)).toMatchObject({
      ok: false,
      result: { kind: 'account-unavailable', code: 'api_key_missing' },
    });
    await t.close();
    expect(seen).toEqual([]);
  });

  test.each([
    ['200 streamed', streamMiB(200), 'ambiguous'],
    ['200 declared', declaredMiB(200), 'ambiguous'],
    ['500 streamed', streamMiB(500), 'retriable'],
    ['429 declared', declaredMiB(429), 'retriable'],
    ['401 declared', declaredMiB(401), 'account-unavailable'],
    ['403 streamed', streamMiB(403), 'rejected'],
  ])('a 1 MiB answer %s, is cut off at 64 KiB and classified answer_too_large by its status', async (_name, answer, kind) => {
    behaviour = answer;
    const t = transport();
    expect(await t.send(httpAccount, text())).toMatchObject({ kind, code: 'answer_too_large' });
    await t.close();
    // the client hung up before the fake could write the whole answer
    expect(streams.every((s) => !s.complete)).toBe(true);
  });

  test('an oversized answer to an upload is retried, never ambiguous', async () => {
    behaviour = streamMiB(200);
    const t = transport();
    expect(await t.prepareMedia(httpAccount, media)).toMatchObject({ ok: false, result: { kind: 'retriable', code: 'answer_too_large' } });
    await t.close();
  });

  test('an answer of exactly 64 KiB is still read', async () => {
    const body = JSON.stringify({ messageId: 'm1', pad: 'x'.repeat(64 * 1024 - 30) });
    behaviour = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body + ' '.repeat(64 * 1024 - body.length));
    const t = transport();
    expect(await t.send(httpAccount, text())).toEqual({ kind: 'delivered', messageId: 'm1' });
    await t.close();
  });

  test('a platform that quotes the API key in its error: the result carries [redacted] instead', async () => {
    behaviour = (req, res) =>
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'internal_error', message: `you sent ${req.headers.authorization} (${encodeURIComponent(API_KEY)})` }));
    const t = transport();
    const result = await t.send(httpAccount, text());
    await t.close();
    expect(result).toMatchObject({ kind: 'retriable', code: 'internal_error' });
    expect(JSON.stringify(result)).toContain('[redacted]');
    expect(JSON.stringify(result)).not.toContain(API_KEY);
  });
});

describe('telegram transport', () => {
  const transport = () => new TelegramTransport({ baseUrl: base, timeoutMs: 5_000 });

  test.each([
    ['200 streamed', streamMiB(200), 'ambiguous'],
    // a 5xx after the whole request went: Telegram may have posted it (telegram-errors.ts)
    ['502 declared', declaredMiB(502), 'ambiguous'],
    ['400 streamed', streamMiB(400), 'rejected'],
  ])('a 1 MiB answer %s, is cut off at 64 KiB and classified answer_too_large by its status', async (_name, answer, kind) => {
    behaviour = answer;
    const t = transport();
    expect(await t.send(botAccount, text('-100123'))).toMatchObject({ kind, code: 'answer_too_large' });
    await t.close();
    expect(streams.every((s) => !s.complete)).toBe(true);
  });

  test('a Bot API that quotes the request path with the token: the result carries [redacted] instead', async () => {
    behaviour = (req, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: false, error_code: 400, description: `Bad Request: no such method ${req.url}` }));
    const t = transport();
    const result = await t.send(botAccount, text('-100123'));
    await t.close();
    expect(seen[0]!.url).toContain(BOT_TOKEN);
    expect(result).toMatchObject({ kind: 'rejected' });
    expect(JSON.stringify(result)).toContain('[redacted]');
    expect(JSON.stringify(result)).not.toContain(BOT_TOKEN.split(':')[1]!);
  });
});
