// An account's proxy (CONTRACT §3): `socks5://` (names resolved here), `socks5h://` (by the proxy), or telegram_user's `mtproxy://secret@host:port`
// (32 hex digits, or `dd` and 32; fake-TLS `ee` unsupported). The whole URL is a secret, sealed with SECRETS_KEY.
export type ProxyScheme = 'socks5' | 'socks5h' | 'mtproxy';

export interface ProxySettings {
  scheme: ProxyScheme;
  host: string;
  port: number;
  username: string | null;
  password: string | null;
  secret: string | null;
}

export interface ProxyShown {
  scheme: ProxyScheme;
  host: string;
  port: number;
  authenticated: boolean;
}

export const PROXY_SCHEMES: Readonly<Record<string, readonly ProxyScheme[]>> = {
  whatsapp: ['socks5', 'socks5h'],
  telegram_user: ['socks5', 'socks5h', 'mtproxy'],
};

export const PROXY_FAILED = 'proxy_failed';

/** The proxy a URL names, or why it is refused; the reason never quotes the URL, which may hold a password. */
export function parseProxy(url: string, platform: string): ProxySettings | { error: string } {
  const allowed = PROXY_SCHEMES[platform];
  if (!allowed) return { error: `a ${platform} account connects through no proxy: only null is accepted` };
  const words = allowed.map((s) => `${s}://`).join(', ');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { error: `expected a URL such as socks5://user:password@host:1080 (${words})` };
  }
  const scheme = u.protocol.slice(0, -1) as ProxyScheme;
  if (!allowed.includes(scheme)) return { error: `expected one of ${words} for a ${platform} account` };
  if (u.hostname === '') return { error: 'expected a host' };
  if (u.port === '') return { error: 'expected a port (host:port)' };
  if ((u.pathname !== '' && u.pathname !== '/') || u.search !== '' || u.hash !== '') return { error: 'expected nothing after host:port' };
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const port = Number(u.port);
  if (port < 1) return { error: 'expected a port from 1 to 65535' };
  const username = u.username === '' ? null : decodeURIComponent(u.username);
  const password = u.password === '' ? null : decodeURIComponent(u.password);
  if (scheme === 'mtproxy') {
    if (password !== null || username === null || !/^(dd)?[0-9a-f]{32}$/i.test(username))
      return { error: 'expected mtproxy://secret@host:port, the secret 32 hex digits (or dd and 32 hex digits)' };
    return { scheme, host, port, username: null, password: null, secret: username.toLowerCase() };
  }
  // RFC 1929: each of the login's two parts is 1–255 bytes
  if ((username === null) !== (password === null)) return { error: 'expected both a user and a password (user:password@), or neither' };
  if (username !== null && (byteLength(username) > 255 || byteLength(password!) > 255)) return { error: 'user and password are at most 255 bytes each' };
  return { scheme, host, port, username, password, secret: null };
}

export function proxyShown(p: ProxySettings): ProxyShown {
  return { scheme: p.scheme, host: p.host, port: p.port, authenticated: p.username !== null || p.secret !== null };
}

export function proxyName(p: Pick<ProxySettings, 'scheme' | 'host' | 'port'>): string {
  return `${p.scheme}://${p.host.includes(':') ? `[${p.host}]` : p.host}:${p.port}`;
}

function byteLength(s: string): number {
  return new TextEncoder().encode(s).length;
}
