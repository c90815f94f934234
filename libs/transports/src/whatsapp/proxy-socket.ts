import type { Agent } from 'node:https';
import { proxyName, type ProxySettings } from '@metronome/core';
import { probeProxy, proxyOf, socksAgent, type ProxyReport } from '../proxy.js';
import type { Connection, SocketRefusal } from './connection.js';

function probeTarget(webSocketUrl: string | undefined): { host: string; port: number } {
  if (!webSocketUrl) return { host: 'web.whatsapp.com', port: 443 };
  const u = new URL(webSocketUrl);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) || (u.protocol === 'wss:' ? 443 : 80) };
}

export function proxyAgents(p: ProxySettings | null): { agent?: Agent; fetchAgent?: Agent } {
  if (!p) return {};
  // an http.Agent that tunnels TLS as well: Baileys types it as https.Agent, and uses it for wss:// and https://
  const agent = socksAgent(p) as unknown as Agent;
  return { agent, fetchAgent: agent };
}

/** When the proxy itself refuses a connection to WhatsApp (probed once) that is the refusal; else WhatsApp's own. */
export async function throughProxy(
  accountId: string,
  proxy: NonNullable<Connection['proxy']>,
  refusal: SocketRefusal | null,
  report?: ProxyReport,
): Promise<SocketRefusal | null> {
  const p = proxy.settings;
  if (refusal === null || refusal.reason !== 'connect-failed') {
    if (refusal === null) await report?.(accountId, p, null).catch(() => undefined);
    return refusal;
  }
  const why = await probeProxy(p, proxy.probe);
  if (why === null) return refusal;
  const message = `${proxyName(p)} ${why}`;
  await report?.(accountId, p, message).catch(() => undefined);
  return { reason: 'proxy-failed', message };
}

/** The account's proxy, read unless the caller named it (a send's or the holder's, read with the account). */
export async function accountProxy(
  o: { proxyOf?: (accountId: string) => Promise<string | null>; webSocketUrl?: string },
  accountId: string,
  named?: string | null,
): Promise<Connection['proxy']> {
  const url = named !== undefined ? named : ((await o.proxyOf?.(accountId)) ?? null);
  const settings = proxyOf(url, 'whatsapp');
  return settings && { url: url!, settings, probe: probeTarget(o.webSocketUrl) };
}

export function proxyChanged(conn: Connection | undefined, proxy: string | null | undefined): conn is Connection {
  return proxy !== undefined && conn?.kind === 'send' && (conn.proxy?.url ?? null) !== (proxy ?? null);
}
