import type { Page } from 'playwright-core';
import { api } from '../helpers/stack.js';
import { consoleSuite, open, tenant } from './console-kit.js';

// Whether a WhatsApp or Telegram account stays connected between campaigns (`connection`), set
// in its Settings; accounts of other platforms hold no connection and show no such choice.

const suite = consoleSuite();
const card = (page: Page, id: string) => page.locator(`li[data-account-id="${id}"]`);

test('Settings: a WhatsApp account is turned to connect only while its campaigns send, and back', async () => {
  const token = await tenant(suite, 'Connection');
  const created = await api(suite.stack, 'POST', '/v1/accounts', token, { platform: 'whatsapp', name: 'Shop line' });
  expect(created.body.connection).toBe('always');
  const id: string = created.body.id;
  const page = await open(suite, token, '#/accounts');
  const patches: unknown[] = [];
  page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.postDataJSON()));
  await card(page, id).getByRole('button', { name: 'Settings of Shop line' }).click();
  const form = page.getByRole('form', { name: 'Settings of Shop line' });
  const stay = form.getByLabel('Stay connected between campaigns');
  expect(await stay.isChecked()).toBe(true);

  await stay.uncheck();
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Settings saved.').waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body.connection).toBe('on_demand');

  await stay.check();
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Settings saved.').waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body.connection).toBe('always');
  expect(patches).toEqual([{ connection: 'on_demand' }, { connection: 'always' }]);
  await page.context().close();
}, 60_000);

test('an http account shows no connection choice', async () => {
  const token = await tenant(suite, 'Connection http');
  const created = await api(suite.stack, 'POST', '/v1/accounts', token, {
    platform: 'http',
    name: 'Web line',
    externalId: 'conn-http',
    credentials: { apiKey: 'k'.repeat(24) },
  });
  expect(created.status).toBe(201);
  const page = await open(suite, token, '#/accounts');
  await card(page, created.body.id).getByRole('button', { name: 'Settings of Web line' }).click();
  const form = page.getByRole('form', { name: 'Settings of Web line' });
  await form.getByLabel('Name', { exact: true }).waitFor();
  expect(await form.getByLabel('Stay connected between campaigns').count()).toBe(0);
  await page.context().close();
}, 60_000);
