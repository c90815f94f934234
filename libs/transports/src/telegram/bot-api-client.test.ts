import { classifyTransportFailure } from '@metronome/core';
import { BotApiClient, botApiUrl, isBotToken } from './bot-api-client.js';

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
