import type { Page } from 'playwright-core';
import { api } from '../helpers/stack.js';
import { consoleSuite, open, tenant } from './console-kit.js';

// An account's proxy in a real Chromium against the real stack (docs/platforms.md, "Proxy"): typed
// on the Add account dialog (a bad one named beside its field), shown as scheme://host:port and
// never with its login, its failure shown on the card, replaced and removed from the settings.

const suite = consoleSuite();
const PASSWORD = 'console-proxy-password-51d0';
const card = (page: Page, id: string) => page.locator(`li[data-account-id="${id}"]`);

test('proxy: added with the account, shown without its login, its failure on the card; replaced, then removed, from the settings', async () => {
  const token = await tenant(suite, 'Proxy');
  const page = await open(suite, token, '#/accounts');
  const patches: unknown[] = [];
  page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.postDataJSON()));
  await page.getByRole('button', { name: 'Add account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add account' });
  await dialog.getByLabel('Platform', { exact: true }).selectOption('telegram_user');
  await dialog.getByLabel('Name', { exact: true }).fill('Poster');
  await dialog.getByLabel('Proxy (optional)').fill('socks5://shop@10.0.0.9:1080');
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.locator('#new-proxy-error').waitFor();
  expect(await dialog.locator('#new-proxy-error').innerText()).toContain('both a user and a password');
  expect((await api(suite.stack, 'GET', '/v1/accounts', token)).body.items).toEqual([]);

  await dialog.getByLabel('Proxy (optional)').fill(`socks5://shop:${PASSWORD}@10.0.0.9:1080`);
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.waitFor({ state: 'hidden' });
  const [saved] = (await api(suite.stack, 'GET', '/v1/accounts', token)).body.items;
  expect(saved.proxy).toEqual({ scheme: 'socks5', host: '10.0.0.9', port: 1080, authenticated: true, failure: null });
  const facts = card(page, saved.id).locator('dl.facts');
  await facts.getByText('socks5://10.0.0.9:1080 (with login)').waitFor();

  // as a sender records a refusal (test/api/accounts-proxy.test.ts makes one through GramJS)
  await suite.stack.db.db
    .updateTable('accounts')
    .set({ proxy_failure: 'socks5://10.0.0.9:1080 refused the connection (ECONNREFUSED)', proxy_failed_at: new Date() })
    .where('id', '=', saved.id)
    .execute();
  await page.reload();
  const alert = card(page, saved.id).getByRole('alert');
  await alert.waitFor();
  expect(await alert.innerText()).toContain('socks5://10.0.0.9:1080 refused the connection (ECONNREFUSED)');

  await card(page, saved.id).getByRole('button', { name: 'Settings of Poster' }).click();
  const form = page.getByRole('form', { name: 'Settings of Poster' });
  await form.getByLabel(/^New proxy/).fill('mtproxy://0123456789abcdef0123456789abcdef@mt.example.net:443');
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Settings saved.').waitFor();
  await facts.getByText('mtproxy://mt.example.net:443 (with login)').waitFor();
  expect(await card(page, saved.id).getByRole('alert').count()).toBe(0);

  await form.getByLabel('Remove the proxy (connect directly)').check();
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Settings saved.').waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${saved.id}`, token)).body.proxy).toBeNull();
  expect(await facts.getByText(/mtproxy:/).count()).toBe(0);
  expect(patches).toEqual([{ proxy: 'mtproxy://0123456789abcdef0123456789abcdef@mt.example.net:443' }, { proxy: null }]);
  expect(await page.content()).not.toContain(PASSWORD);
  await page.context().close();
}, 90_000);
