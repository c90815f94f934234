import { get } from 'node:https';
import type { ProxySettings } from '@metronome/core';
import { fetchLatestWaWebVersion } from '@whiskeysockets/baileys';
import { proxyOf, socksAgent } from '../proxy.js';
import type { WhatsAppLogger } from './socket.js';

// WhatsApp closes an outdated client with 405 (`client_outdated`): WHATSAPP_VERSION, a fetch at start, else Baileys' bundled one.

export type WhatsAppVersion = [number, number, number];

export type ResolvedVersion = { version: WhatsAppVersion; source: 'configured' | 'fetched' } | { version: null; source: 'bundled' };

/** As Baileys' fetchLatestWaWebVersion answers (its bundled one when offline, isLatest false). */
export type FetchVersion = (options: { signal: AbortSignal }) => Promise<{ version: number[]; isLatest: boolean; error?: unknown }>;

/** Baileys' fetch has no timeout of its own. */
export const VERSION_FETCH_TIMEOUT_MS = 10_000;

export async function resolveWhatsAppVersion(o: {
  configured: WhatsAppVersion | null;
  fetchLatest: boolean;
  logger: WhatsAppLogger;
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

const SW_JS = 'https://web.whatsapp.com/sw.js';
const CLIENT_REVISION = /\\?"client_revision\\?":\s*(\d+)/;

/** fetchLatestWaWebVersion's request through a SOCKS proxy, with node:https: its fetch takes no http.Agent. */
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
