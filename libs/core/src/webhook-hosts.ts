import { isNonPublicAddress, parseIPv4, parseIPv6 } from './ip-ranges.js';

// Where webhooks may go (WEBHOOK_ALLOWED_HOSTS): the API posts from inside the operator's network, so a tenant's URL must match a pattern, `*` only
// at a public address; a loopback, link-local or private address only when a pattern other than `*` names it.

export interface HostPattern {
  /** lower-case; `*.example.com` for its subdomains; IPv6 without brackets */
  host: string;
  port: number | null;
}

const HOST_LABELS = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export function parseAllowedHosts(spec: string): HostPattern[] {
  const entries = spec
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
  const bad: string[] = [];
  const patterns: HostPattern[] = [];
  for (const entry of entries) {
    const pattern = parsePattern(entry);
    if (pattern) patterns.push(pattern);
    else bad.push(entry);
  }
  if (bad.length > 0)
    throw new Error(
      `expected comma-separated host or host:port patterns (*, example.com, *.example.com, 10.0.0.5:8080, [::1]:8080); not one: ${bad.join(', ')}`,
    );
  return patterns;
}

function parsePattern(entry: string): HostPattern | null {
  let host = entry;
  let port: number | null = null;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  if (bracketed) {
    host = bracketed[1]!;
    if (!parseIPv6(host)) return null;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else {
    const withPort = /^([^:]+):(\d{1,5})$/.exec(entry);
    if (withPort) {
      host = withPort[1]!;
      port = Number(withPort[2]);
    }
    if (host !== '*' && !parseIPv4(host) && !HOST_LABELS.test(host)) return null;
  }
  if (port !== null && (port < 1 || port > 65_535)) return null;
  return { host, port };
}

export function bareHost(hostname: string): string {
  const lower = hostname.toLowerCase();
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  const v6 = parseIPv6(pattern);
  const other = parseIPv6(host);
  if (v6 && other) return v6.every((g, i) => g === other[i]);
  return pattern === host;
}

function matching(patterns: HostPattern[], host: string, port: number): HostPattern[] {
  return patterns.filter((p) => (p.port === null || p.port === port) && hostMatches(p.host, host));
}

export type DestinationVerdict = { allowed: true } | { allowed: false; reason: string };

const NOT_LISTED = 'is not in WEBHOOK_ALLOWED_HOSTS';
const NOT_PUBLIC = 'is a loopback, link-local or private address, allowed only when WEBHOOK_ALLOWED_HOSTS names it';

/** Whether a webhook URL may be saved; a host name is judged again at each delivery, by the addresses it resolves to then. */
export function webhookUrlVerdict(url: string, patterns: HostPattern[]): DestinationVerdict {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { allowed: false, reason: 'expected an absolute http or https URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { allowed: false, reason: 'expected an http or https URL' };
  if (parsed.username !== '' || parsed.password !== '') return { allowed: false, reason: 'must not carry a user name or password' };
  const host = bareHost(parsed.hostname);
  const port = portOf(parsed);
  const matches = matching(patterns, host, port);
  if (matches.length === 0) return { allowed: false, reason: `host ${hostForMessage(host, port)} ${NOT_LISTED}` };
  if (isNonPublicAddress(host) === true && !matches.some((p) => p.host !== '*')) return { allowed: false, reason: `${host} ${NOT_PUBLIC}` };
  return { allowed: true };
}

/** Whether a delivery may connect to `address`, one the URL's host resolved to just now. */
export function resolvedAddressVerdict(url: URL, address: string, patterns: HostPattern[]): DestinationVerdict {
  const host = bareHost(url.hostname);
  const port = portOf(url);
  const matches = matching(patterns, host, port);
  if (matches.length === 0) return { allowed: false, reason: `host ${hostForMessage(host, port)} ${NOT_LISTED}` };
  if (isNonPublicAddress(address) === false) return { allowed: true };
  const named = matches.some((p) => p.host !== '*') || matching(patterns, bareHost(address), port).some((p) => p.host !== '*');
  return named ? { allowed: true } : { allowed: false, reason: `${host} resolved to ${address}, which ${NOT_PUBLIC}` };
}

export function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

function hostForMessage(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
