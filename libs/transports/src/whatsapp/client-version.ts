import { get } from 'node:https';
import type { ProxySettings } from '@metronome/core';
import { fetchLatestWaWebVersion } from '@whiskeysockets/baileys';
import { proxyOf, socksAgent } from '../proxy.js';
import type { WhatsAppLogger } from './socket.js';

// The WhatsApp Web version a socket announces. WhatsApp closes an outdated client with 405
// (classify.ts: `client_outdated`); the cure is a current version: WHATSAPP_VERSION, or a fetch
// of the current one at start (WHATSAPP_FETCH_VERSION), else Baileys' bundled version.

export type WhatsAppVersion = [number, number, number];

/** Where the version came from: set, fetched, or Baileys' bundled one (null: Baileys decides). */
export type ResolvedVersion = { version: WhatsAppVersion; source: 'configured' | 'fetched' } | { version: null; source: 'bundled' };

/** What the current version is, as Baileys' fetchLatestWaWebVersion answers (its bundled one when offline, isLatest false); `signal` ends it. */
export type FetchVersion = (options: { signal: AbortSignal }) => Promise<{ version: number[]; isLatest: boolean; error?: unknown }>;

/** How long a start waits for web.whatsapp.com before it uses the bundled version, ms: Baileys' fetch has no timeout of its own. */
export const VERSION_FETCH_TIMEOUT_MS = 10_000;

/**
 * The version sockets announce: the configured one when set; else, when `fetchLatest`, the
 * current one fetched from WhatsApp Web; else (or when the fetch fails: offline) Baileys'
 * bundled version. Logged once, with where it came from.
 */
export async function resolveWhatsAppVersion(o: {
  configured: WhatsAppVersion | null;
  fetchLatest: boolean;
  logger: WhatsAppLogger;
  /** WHATSAPP_VERSION_PROXY: the SOCKS proxy the fetch goes through; null: straight */
  proxy?: string | null;
  fetch?: FetchVersion;
  timeoutMs?: number;
}): Promise<ResolvedVersion> {
  let resolved: ResolvedVersion = { version: null, source: 'bundled' };
  if (o.configured) resolved = { version: o.configured, source: 'configured' };
  else if (o.fetchLatest) {
    const signal = AbortSignal.timeout(o.timeoutMs ?? VERSION_FETCH_TIMEOUT_MS);
    const proxy = proxyOf(o.proxy, 'whatsapp');
    const fetch = o.fetch ?? (proxy ? fetchVersionThrough(proxy) : fetchLatestWaWebVersion);
    const got = await fetch({ signal }).catch((error: unknown) => ({ version: [], isLatest: false, error }));
    if (got.isLatest && got.version.length === 3) resolved = { version: got.version as WhatsAppVersion, source: 'fetched' };
    else o.logger.warn({ err: got.error }, 'whatsapp version not fetched: using the bundled version');
  }
  o.logger.info({ version: resolved.version?.join('.') ?? 'bundled', source: resolved.source }, 'whatsapp client version');
  return resolved;
}

/** What Baileys' fetchLatestWaWebVersion reads (Utils/generics.js), and how. */
const SW_JS = 'https://web.whatsapp.com/sw.js';
const CLIENT_REVISION = /\\?"client_revision\\?":\s*(\d+)/;

/**
 * Baileys' fetchLatestWaWebVersion, through a SOCKS proxy: its fetch takes no http.Agent (an
 * undici dispatcher, which this project does not carry), so the same request and parse are made
 * with node:https here. `url` and `ca`: for tests, which stand a local server in for WhatsApp Web.
 */
export function fetchVersionThrough(p: ProxySettings, url = SW_JS, ca?: Buffer): FetchVersion {
  const headers = {
    'sec-fetch-site': 'none',
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  };
  return ({ signal }) =>
    new Promise((resolve, reject) => {
      const req = get(url, { agent: socksAgent(p), headers, signal, ...(ca && { ca }) }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`${new URL(url).host} answered ${res.statusCode}`));
        }
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const revision = CLIENT_REVISION.exec(body)?.[1];
          if (revision) resolve({ version: [2, 3000, Number(revision)], isLatest: true });
          else reject(new Error('no client revision in sw.js'));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
    });
}
