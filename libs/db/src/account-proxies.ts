import { open, type ProxyShown } from '@metronome/core';
import type { AccountRepository } from './repositories/account-repository.js';

/**
 * What the connection pools of a service read and tell about accounts' proxies (docs/platforms.md,
 * "Proxy"): the URL opened with the service's keys, and where a proxy stands after a connection
 * through it (the account shows it: GET /v1/accounts/{id} `proxy.failure`).
 */
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
