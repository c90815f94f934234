// The platform's side of account credentials (CONTRACT §5): a Bearer key per account. The sandbox has no sign-up, so an
// account's first request (or `PUT /sandbox/accounts/{account}` `{apiKey}`) registers its key; only that key is accepted after.
import { createHash, timingSafeEqual } from 'node:crypto';

export type KeyVerdict = 'registered' | 'accepted' | 'missing' | 'wrong';

/** The key of an `Authorization: Bearer <key>` header, or null. */
export function bearerKey(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match ? match[1]! : null;
}

const digest = (key: string) => createHash('sha256').update(key).digest();

export class ApiKeys {
  /** account → sha256 of its key (the key itself is not kept) */
  private readonly keys = new Map<string, Buffer>();
  /** accounts whose answers quote the request's Authorization header: a fake fault, see `fakeEcho` */
  private readonly echoing = new Set<string>();

  /** Checks a request's key for `account`, registering it when the account has none yet. */
  check(account: string, key: string | null): KeyVerdict {
    if (key === null) return 'missing';
    const known = this.keys.get(account);
    if (known === undefined) {
      this.keys.set(account, digest(key));
      return 'registered';
    }
    return timingSafeEqual(known, digest(key)) ? 'accepted' : 'wrong';
  }

  /** Sets (or, with null, forgets) an account's key ahead of its first request. */
  set(account: string, key: string | null): void {
    if (key === null) this.keys.delete(account);
    else this.keys.set(account, digest(key));
  }

  has(account: string): boolean {
    return this.keys.has(account);
  }

  /** A fake fault for secret-scrubbing tests: the account's requests answer 500 quoting their Authorization header. */
  setFakeEcho(account: string, on: boolean): void {
    if (on) this.echoing.add(account);
    else this.echoing.delete(account);
  }

  fakeEcho(account: string): boolean {
    return this.echoing.has(account);
  }

  view(account: string) {
    return { hasApiKey: this.keys.has(account), fakeEchoAuthorization: this.echoing.has(account) };
  }

  reset(): void {
    this.keys.clear();
    this.echoing.clear();
  }
}
