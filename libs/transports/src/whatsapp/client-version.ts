import { fetchLatestWaWebVersion } from '@whiskeysockets/baileys';
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
  fetch?: FetchVersion;
  timeoutMs?: number;
}): Promise<ResolvedVersion> {
  let resolved: ResolvedVersion = { version: null, source: 'bundled' };
  if (o.configured) resolved = { version: o.configured, source: 'configured' };
  else if (o.fetchLatest) {
    const signal = AbortSignal.timeout(o.timeoutMs ?? VERSION_FETCH_TIMEOUT_MS);
    const got = await (o.fetch ?? fetchLatestWaWebVersion)({ signal }).catch((error: unknown) => ({ version: [], isLatest: false, error }));
    if (got.isLatest && got.version.length === 3) resolved = { version: got.version as WhatsAppVersion, source: 'fetched' };
    else o.logger.warn({ err: got.error }, 'whatsapp version not fetched: using the bundled version');
  }
  o.logger.info({ version: resolved.version?.join('.') ?? 'bundled', source: resolved.source }, 'whatsapp client version');
  return resolved;
}
