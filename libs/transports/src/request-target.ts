import { urlToHttpOptions } from 'node:url';
import type { RequestTarget } from './post-once.js';

/**
 * The target of `url` under its origin (which the client's HttpPool connects to): the path and
 * query as node:http would have sent them, and the URL's credentials if it had any.
 */
export function requestTarget(url: URL): RequestTarget {
  const { path, auth } = urlToHttpOptions(url);
  return auth ? { path: path ?? '/', auth } : { path: path ?? '/' };
}

/**
 * Targets by key (an account's endpoint, a bot's method), each built the first time it is asked
 * for: a `new URL` per request was a good part of a send's cost. At most `capacity` are kept
 * (the oldest dropped first), so accounts that come and go cannot grow it without bound.
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
