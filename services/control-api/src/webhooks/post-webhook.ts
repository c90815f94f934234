import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupAddress } from 'node:dns';
import { isNonPublicAddress, resolvedAddressVerdict, type HostPattern } from '@metronome/core';

/** How a host name is resolved; tests may pass their own, the deliverer uses the system's. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** What one POST came to. `httpStatus` null: no answer (refused, unreachable, timed out, not allowed). */
export interface PostOutcome {
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
}

/** A destination the allow-list refuses (code `destination_refused`): nothing was sent. */
export class DestinationRefused extends Error {
  readonly code = 'destination_refused';
}

class TimedOut extends Error {
  readonly code = 'timed_out';
}

export interface PostOptions {
  allowedHosts: HostPattern[];
  timeoutMs: number;
  resolve: Resolve;
}

// An answer's body is read only to free the connection; nobody needs more of it.
const MAX_ANSWER_BYTES = 64 * 1024;

/** The host is resolved here and the connection made to the address the allow-list judged (no DNS rebinding); no redirects. */
export async function postWebhook(url: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostOutcome> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  // An IP literal never reaches the lookup below: judged here, before any connection is made.
  if (isNonPublicAddress(target.hostname) !== null) {
    const verdict = resolvedAddressVerdict(target, target.hostname, options.allowedHosts);
    if (!verdict.allowed) return { ok: false, httpStatus: null, error: describe(new DestinationRefused(verdict.reason)) };
  }
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = client.request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Metronome-Webhooks/1', 'content-length': String(Buffer.byteLength(body)), ...headers },
      lookup: guardedLookup(target, options) as never,
      agent: false,
    });
    const timer = setTimeout(() => req.destroy(new TimedOut(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('response', (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) res.destroy();
      });
      const status = res.statusCode ?? 0;
      const done = () =>
        finish({ ok: status >= 200 && status < 300, httpStatus: status, error: status >= 200 && status < 300 ? null : `answered HTTP ${status}` });
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    req.on('error', (err) => finish({ ok: false, httpStatus: null, error: describe(err) }));
    req.end(body);
  });
}

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

function guardedLookup(target: URL, options: PostOptions) {
  return (hostname: string, lookupOptions: { all?: boolean }, callback: LookupCallback): void => {
    options.resolve(hostname).then(
      (addresses) => {
        const refused = addresses.map((a) => resolvedAddressVerdict(target, a.address, options.allowedHosts)).find((v) => !v.allowed);
        // every address must pass: the connection may go to any of them
        if (refused && !refused.allowed) return callback(new DestinationRefused(refused.reason), []);
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        if (lookupOptions.all) return callback(null, addresses);
        const first = addresses[0]!;
        return callback(null, first.address, first.family);
      },
      (err: Error) => callback(err, []),
    );
  };
}

const CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed for now',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
};

/** A short reason for the deliveries list, by the error's code (never its message text). */
function describe(err: Error): string {
  if (err instanceof DestinationRefused) return `refused: ${err.message}`;
  if (err instanceof TimedOut) return `timed out: ${err.message}`;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return CODES[code] ?? code;
  // AggregateError from connecting to several addresses: the first one's code
  const first = (err as { errors?: { code?: unknown }[] }).errors?.[0]?.code;
  return typeof first === 'string' ? (CODES[first] ?? first) : 'request failed';
}
