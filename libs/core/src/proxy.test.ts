import { parseProxy, proxyName, proxyShown } from './proxy.js';

describe('parseProxy', () => {
  test('socks5 and socks5h, with or without a login; the login decoded', () => {
    expect(parseProxy('socks5://us%40er:p%3Ass@10.0.0.9:1080', 'whatsapp')).toEqual({
      scheme: 'socks5',
      host: '10.0.0.9',
      port: 1080,
      username: 'us@er',
      password: 'p:ss',
      secret: null,
    });
    expect(parseProxy('socks5h://proxy.example.net:1081', 'telegram_user')).toMatchObject({ scheme: 'socks5h', host: 'proxy.example.net', username: null });
    expect(parseProxy('socks5://[::1]:1080', 'whatsapp')).toMatchObject({ host: '::1', port: 1080 });
  });

  test('mtproxy for telegram_user only, its secret 32 hex digits or dd and 32', () => {
    expect(parseProxy('mtproxy://DD0123456789abcdef0123456789abcdef@mt.example.net:443', 'telegram_user')).toMatchObject({
      scheme: 'mtproxy',
      secret: 'dd0123456789abcdef0123456789abcdef',
    });
    expect(parseProxy('mtproxy://0123456789abcdef0123456789abcdef@h:443', 'whatsapp')).toEqual({
      error: 'expected one of socks5://, socks5h:// for a whatsapp account',
    });
    expect(parseProxy('mtproxy://ee0123456789abcdef0123456789abcdef@h:443', 'telegram_user')).toHaveProperty('error');
  });

  test.each([
    ['socks5://h:1080', 'http', 'a http account connects through no proxy: only null is accepted'],
    ['socks5://h:1080', 'telegram', 'a telegram account connects through no proxy: only null is accepted'],
    ['socks5://h', 'whatsapp', 'expected a port (host:port)'],
    ['socks5://h:0', 'whatsapp', 'expected a port from 1 to 65535'],
    ['socks5://u@h:1', 'whatsapp', 'expected both a user and a password (user:password@), or neither'],
    ['socks5://h:1/path', 'whatsapp', 'expected nothing after host:port'],
    ['https://u:secret-password@h:1', 'whatsapp', 'expected one of socks5://, socks5h:// for a whatsapp account'],
  ])('%s for %s: %s', (url, platform, error) => {
    expect(parseProxy(url, platform)).toEqual({ error });
  });

  test('what is shown and named never holds the login', () => {
    const p = parseProxy('socks5://user:secret-password@10.0.0.9:1080', 'whatsapp');
    if ('error' in p) throw new Error(p.error);
    expect(proxyShown(p)).toEqual({ scheme: 'socks5', host: '10.0.0.9', port: 1080, authenticated: true });
    expect(proxyName(p)).toBe('socks5://10.0.0.9:1080');
  });
});
