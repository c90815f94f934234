import { open, type ProxyShown } from '@metronome/core';
import type { AccountRepository } from './repositories/account-repository.js';

/** What a service's connection pools read and tell of accounts' proxies (docs/platforms.md, "Proxy"): the URL opened, its state after a connection. */
export function accountProxies(accounts: AccountRepository, keys: Buffer[], now: () => Date) {
  return {
    proxyOf: async (accountId: string): Promise<string | null> => {
      const sealed = await accounts.sealedProxy(accountId);
      return sealed ? open(sealed, keys).toString('utf8') : null;
    },
    reportProxy: (accountId: string, proxy: Pick<ProxyShown, 'scheme' | 'host' | 'port'>, failure: string | null): Promise<void> =>
      accounts.proxyState(accountId, proxy, failure, now()),
  };
}
