/**
 * An account's proxy (CONTRACT §3, accounts: `proxy`), read from the URL the operator gives:
 * - `socks5://[user:pass@]host:port`: SOCKS5 (RFC 1928, login RFC 1929); the name of the
 *   platform's server is looked up on this machine, its address is sent to the proxy;
 * - `socks5h://[user:pass@]host:port`: the same, the name looked up by the proxy;
 * - `mtproxy://secret@host:port` (telegram_user only): Telegram's MTProxy, `secret` its 32 hex
 *   digits (or `dd` and 32 hex digits: random padding). The fake-TLS `ee` secrets are not supported.
 * The whole URL is a secret (sealed with SECRETS_KEY); what is shown of it is `ProxyShown`.
 */
export type ProxyScheme = 'socks5' | 'socks5h' | 'mtproxy';

export interface ProxySettings {
  scheme: ProxyScheme;
  host: string;
  port: number;
  username: string | null;
  password: string | null;
  /** mtproxy: the secret, hex */
  secret: string | null;
}

/** What an account shows of its proxy: never the login or the secret. */
export interface ProxyShown {
  scheme: ProxyScheme;
  host: string;
  port: number;
  /** whether it signs in to the proxy (a login, or an MTProxy secret) */
  authenticated: boolean;
}

/** The platforms whose accounts may have a proxy, and the schemes each takes. */
export const PROXY_SCHEMES: Readonly<Record<string, readonly ProxyScheme[]>> = {
  whatsapp: ['socks5', 'socks5h'],
  telegram_user: ['socks5', 'socks5h', 'mtproxy'],
};

/** The error code an account gets when its proxy refuses or fails (docs/platforms.md, "Proxy"). */
export const PROXY_FAILED = 'proxy_failed';

/**
 * The proxy a URL names, or the reason it is refused (a sentence for the field `proxy`). The
 * reason never quotes the URL: it may hold a password.
 */
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

/** What the account shows of the proxy. */
export function proxyShown(p: ProxySettings): ProxyShown {
  return { scheme: p.scheme, host: p.host, port: p.port, authenticated: p.username !== null || p.secret !== null };
}

/** `socks5://host:port`: how messages and logs name the proxy (no login, no secret). */
export function proxyName(p: Pick<ProxySettings, 'scheme' | 'host' | 'port'>): string {
  return `${p.scheme}://${p.host.includes(':') ? `[${p.host}]` : p.host}:${p.port}`;
}

function byteLength(s: string): number {
  return new TextEncoder().encode(s).length;
}
