import asyncHooks from 'node:async_hooks';
import { syncBuiltinESMExports } from 'node:module';

/**
 * Node 20 calls every AsyncLocalStorage that ever ran on each new promise, and Baileys makes one per socket (its key
 * transactions, Utils/auth-utils.js) that stays on after the socket closes: every promise of a sender paid one call per
 * socket it ever opened, so idle CPU and connects slowed as accounts grew (issue 53). Installed before Baileys loads,
 * each `new AsyncLocalStorage()` is a view, by instance, of one shared storage: the same isolation, one hook in all.
 */
const Native = asyncHooks.AsyncLocalStorage;
const shared = new Native<ReadonlyMap<object, unknown>>();

export class KeyedAsyncLocalStorage<T> extends Native<T> {
  private off = false;

  override getStore(): T | undefined {
    return this.off ? undefined : (shared.getStore()?.get(this) as T | undefined);
  }

  override run<R, A extends unknown[]>(store: T, fn: (...args: A) => R, ...args: A): R {
    this.off = false;
    return shared.run(new Map(shared.getStore()).set(this, store), fn, ...args);
  }

  override exit<R, A extends unknown[]>(fn: (...args: A) => R, ...args: A): R {
    const stores = new Map(shared.getStore());
    stores.delete(this);
    return shared.run(stores, fn, ...args);
  }

  override enterWith(store: T): void {
    this.off = false;
    shared.enterWith(new Map(shared.getStore()).set(this, store));
  }

  override disable(): void {
    this.off = true;
  }
}

if (asyncHooks.AsyncLocalStorage === Native) {
  (asyncHooks as { AsyncLocalStorage: unknown }).AsyncLocalStorage = KeyedAsyncLocalStorage;
  syncBuiltinESMExports();
}
