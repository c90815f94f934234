import { botApiUrl, isBotToken } from './bot-api-client.js';

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
