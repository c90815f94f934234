import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyTransportFailure } from '@metronome/core';
import { BotApiClient, botApiUrl, isBotToken } from './bot-api-client.js';
import { TelegramTransport } from './telegram-transport.js';

const TOKEN = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';

describe('botApiUrl', () => {
  test.each([
    ['https://api.telegram.org', `https://api.telegram.org/bot${TOKEN}/sendMessage`],
    ['https://api.telegram.org/', `https://api.telegram.org/bot${TOKEN}/sendMessage`],
    ['http://127.0.0.1:8081/telegram', `http://127.0.0.1:8081/telegram/bot${TOKEN}/sendMessage`],
  ])('%s', (base, expected) => {
    expect(botApiUrl(new URL(base), TOKEN, 'sendMessage').href).toBe(expected);
  });
});

describe('isBotToken', () => {
  test.each([
    [TOKEN, true],
    ['123:short', false],
    [`${TOKEN}/../../other`, false],
    [`${TOKEN}?x=1`, false],
    ['abc:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw', false],
    [42, false],
    [undefined, false],
  ])('%j → %s', (token, expected) => {
    expect(isBotToken(token)).toBe(expected);
  });
});

describe('a request node refuses to build', () => {
  test('resolves as a failure before anything was written, so the send is never unknown', async () => {
    // Nothing listens on port 9: were the request built, it would fail with ECONNREFUSED instead.
    const client = new BotApiClient({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 1_000 });
    try {
      const answer = await client.call(TOKEN, 'sendMessage', { contentType: 'application/json; charset=кои8', bytes: Buffer.from('{}') });
      expect(answer).toMatchObject({ failure: true, code: 'ERR_INVALID_CHAR', written: false });
      if (!('failure' in answer)) throw new Error('expected a failure');
      expect(answer.message).not.toContain(TOKEN.split(':')[1]);
      expect(classifyTransportFailure(answer.code, answer.written, answer.message)).toMatchObject({ kind: 'rejected', code: 'request_invalid' });
    } finally {
      client.close();
    }
  });
});

describe('a 5xx to a request Telegram received whole', () => {
  // A local server standing in for a gateway in front of the Bot API: it reads the whole request, then fails.
  let server: http.Server;
  let base: string;
  let answer: { status: number; bytes: number } = { status: 502, bytes: 0 };
  const bot = { id: 'a', externalId: '123456789', credentials: { botToken: TOKEN } };
  const message = { chatId: '-100123', part: { type: 'text' as const, text: 'hi' }, partIndex: 0, partCount: 1, idempotencyKey: 'r:-100123:0' };
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const body = answer.bytes > 0 ? 'x'.repeat(answer.bytes) : JSON.stringify({ ok: false, error_code: answer.status, description: 'Bad Gateway' });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test.each([
    ['502 with JSON', { status: 502, bytes: 0 }, 'http_502'],
    ['504 over 64 KiB', { status: 504, bytes: 100_000 }, 'answer_too_large'],
  ])('%s: ambiguous (the message may be posted), never retried blindly', async (_name, given, code) => {
    answer = given;
    const t = new TelegramTransport({ baseUrl: base, timeoutMs: 5_000 });
    try {
      const sent = await t.send(bot, message);
      expect(sent).toMatchObject({ kind: 'ambiguous', code });
    } finally {
      await t.close();
    }
  });
});
