import { pathToFileURL } from 'node:url';
import { gramjsClientFactory, type UserClientFactory } from './user-client.js';

/** GramJS, or (tests only; refused in production) the `makeUserClient` export of the module at `modulePath`. */
export async function loadUserClientFactory(modulePath: string | undefined): Promise<UserClientFactory> {
  if (!modulePath) return gramjsClientFactory;
  const module = (await import(pathToFileURL(modulePath).href)) as { makeUserClient?: UserClientFactory };
  if (typeof module.makeUserClient !== 'function') throw new Error(`TELEGRAM_USER_CLIENT_MODULE ${modulePath} exports no makeUserClient`);
  return module.makeUserClient;
}
