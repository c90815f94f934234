import { connect } from 'node:net';
import { PROXY_FAILED, parseProxy, processSecrets, proxyName, type ProxySettings, type SendFailure } from '@metronome/core';
import { SocksClient } from 'socks';
import { SocksProxyAgent } from 'socks-proxy-agent';

/** An account's proxy (docs/platforms.md, "Proxy"), its login registered as a secret. */
export function proxyOf(url: string | null | undefined, platform: string): ProxySettings | null {
  if (!url) return null;
  const p = parseProxy(url, platform);
  // stored only after the API checked it: an unreadable one is a bug, not an operator's mistake
  if ('error' in p) throw new Error(`the account's proxy is unreadable: ${p.error}`);
  for (const secret of [p.password, p.secret, url]) if (secret) processSecrets().add(secret);
  return p;
}

/** After a connection through the account's proxy: a failure (never its login), or null when one opened. */
export type ProxyReport = (accountId: string, proxy: ProxySettings, failure: string | null) => Promise<void>;

export const PROXY_RETRY_MS = 30_000;

/** The proxy refused or failed: nothing reached the platform. */
export class ProxyFailedError extends Error {
  constructor(
    readonly proxy: ProxySettings,
    why: string,
  ) {
    super(`${proxyName(proxy)} ${why}`);
  }
}

export function proxyFailed(retryAfterMs = PROXY_RETRY_MS): SendFailure {
  return { kind: 'account-wait', code: PROXY_FAILED, retryAfterMs };
}

export function socksAgent(p: ProxySettings): SocksProxyAgent {
  const login = p.username === null ? '' : `${encodeURIComponent(p.username)}:${encodeURIComponent(p.password ?? '')}@`;
  const host = p.host.includes(':') ? `[${p.host}]` : p.host;
  return new SocksProxyAgent(`${p.scheme}://${login}${host}:${p.port}`);
}

/** One connection through the proxy, to tell its refusal from the platform's: null when it connects, else why, never the login. */
export async function probeProxy(p: ProxySettings, destination: { host: string; port: number }, timeoutMs = 10_000): Promise<string | null> {
  try {
    if (p.scheme === 'mtproxy') {
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host: p.host, port: p.port, timeout: timeoutMs }, () => {
          socket.destroy();
          resolve();
        });
        socket.on('error', reject);
        socket.on('timeout', () => socket.destroy(new Error('timed out')));
      });
      return null;
    }
    const { socket } = await SocksClient.createConnection({
      proxy: { host: p.host, port: p.port, type: 5, ...(p.username !== null && { userId: p.username, password: p.password ?? '' }) },
      command: 'connect',
      destination,
      timeout: timeoutMs,
    });
    socket.destroy();
    return null;
  } catch (error) {
    return describeProxyError(error);
  }
}

export function describeProxyError(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : null;
  if (code === 'ECONNREFUSED') return 'refused the connection (ECONNREFUSED)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `could not be found (${code})`;
  if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `could not be reached (${code})`;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  // SOCKS errors carry no code: the connection's own words are in the message
  if (/\bECONNREFUSED\b/.test(message)) return 'refused the connection (ECONNREFUSED)';
  if (/authentication failed/i.test(message)) return 'refused the login (SOCKS5 authentication failed)';
  if (/timed out/i.test(message)) return 'did not answer in time';
  return `failed: ${processSecrets().scrub(message).slice(0, 200)}`;
}
