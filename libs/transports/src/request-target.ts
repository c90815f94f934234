import { urlToHttpOptions } from 'node:url';
import type { RequestTarget } from './post-once.js';

/** The path and query under the pool's origin, as node:http would send them, and the URL's credentials. */
export function requestTarget(url: URL): RequestTarget {
  const { path, auth } = urlToHttpOptions(url);
  return auth ? { path: path ?? '/', auth } : { path: path ?? '/' };
}

/** Targets built once per key (a `new URL` per request was a good part of a send's cost), at most `capacity`, oldest dropped. */
export class RequestTargets {
  private readonly targets = new Map<string, RequestTarget>();

  constructor(private readonly capacity = 10_000) {}

  get(key: string, url: () => URL): RequestTarget {
    const known = this.targets.get(key);
    if (known) return known;
    const target = requestTarget(url());
    this.targets.set(key, target);
    if (this.targets.size > this.capacity) this.targets.delete(this.targets.keys().next().value!);
    return target;
  }
}
