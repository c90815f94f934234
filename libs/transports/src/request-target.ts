import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';

/**
 * Where a request goes, as node:http takes it: a small options object, built once per
 * destination (an account's endpoint) and reused by every request to it.
 *
 * Why not a URL per request: node:http turns a URL into options on every request
 * (urlToHttpOptions, a dozen fields), and then copies every field of them twice more (the
 * ClientRequest and the Agent each spread the options they get). That and `new URL` itself were
 * about a fifth of the client's CPU per send; an object with only the fields node:http reads
 * costs a fraction of it (bench/micro/http-post.mjs).
 */
export interface RequestTarget {
  /** http.request or https.request, by the URL's protocol */
  request: typeof http.request;
  /** exactly what node:http would have taken from the URL: protocol, host, port, path, and auth when the URL had credentials */
  options: Pick<http.RequestOptions, 'protocol' | 'hostname' | 'port' | 'path' | 'auth'>;
}

/** The target of `url`, with the very fields node:http derives from a URL itself (so an IPv6 host, a port, a query, credentials go as before). */
export function requestTarget(url: URL): RequestTarget {
  const { protocol, hostname, port, path, auth } = urlToHttpOptions(url);
  const options: RequestTarget['options'] = { protocol, hostname, path };
  if (port !== undefined) options.port = port;
  if (auth !== undefined) options.auth = auth;
  return { request: protocol === 'https:' ? https.request : http.request, options };
}

/**
 * Targets by key, each built the first time it is asked for. At most `capacity` are kept (the
 * oldest dropped first), so accounts that come and go cannot grow it without bound.
 */
export class RequestTargets {
  private readonly targets = new Map<string, RequestTarget>();

  constructor(private readonly capacity = 10_000) {}

  /** The target of `key`; `url` builds its URL the first time and may throw, and nothing is kept then. */
  get(key: string, url: () => URL): RequestTarget {
    const known = this.targets.get(key);
    if (known) return known;
    const target = requestTarget(url());
    this.targets.set(key, target);
    if (this.targets.size > this.capacity) this.targets.delete(this.targets.keys().next().value!);
    return target;
  }
}
