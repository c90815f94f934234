import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadUserClientFactory } from './client-module.js';
import { gramjsClientFactory } from './user-client.js';

// TELEGRAM_USER_CLIENT_MODULE (tests only; the services refuse it in production): the module's
// makeUserClient is the client factory instead of GramJS; a module without one is refused, naming it.

const dir = mkdtempSync(path.join(tmpdir(), 'client-module-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('unset: GramJS', async () => {
  expect(await loadUserClientFactory(undefined)).toBe(gramjsClientFactory);
});

test('a module exporting makeUserClient: its factory, given the session and the options', async () => {
  const file = path.join(dir, 'with-factory.mjs');
  writeFileSync(file, 'export function makeUserClient(session, options) { return { made: true, session, apiId: options.apiId }; }\n');
  const make = await loadUserClientFactory(file);
  expect(make('the-session', { apiId: 7, apiHash: 'h' })).toEqual({ made: true, session: 'the-session', apiId: 7 });
});

test('a module without makeUserClient is refused, naming the variable and the module', async () => {
  const file = path.join(dir, 'without-factory.mjs');
  writeFileSync(file, 'export const somethingElse = 1;\n');
  await expect(loadUserClientFactory(file)).rejects.toThrow(`TELEGRAM_USER_CLIENT_MODULE ${file} exports no makeUserClient`);
});
