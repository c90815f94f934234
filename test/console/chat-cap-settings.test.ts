import type { Page } from 'playwright-core';
import { api } from '../helpers/stack.js';
import { account, API_KEY, consoleSuite, open, tenant } from './console-kit.js';

// The per-chat cap in the console: its inputs drawn from the API's description of the account's
// limit settings (GET /v1/account-defaults limitSettings), in Add account and in Settings.

const suite = consoleSuite();
const card = (page: Page, id: string) => page.locator(`li[data-account-id="${id}"]`);

test('Settings: the cap per chat is set, named beside its field when bad, and turned off', async () => {
  const token = await tenant(suite, 'Chat cap');
  const id = await account(suite, token, 'chat-cap-acc', 60, 'Capped line');
  const page = await open(suite, token, '#/accounts');
  const patches: unknown[] = [];
  page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.postDataJSON()));
  await card(page, id).getByRole('button', { name: 'Settings of Capped line' }).click();
  const form = page.getByRole('form', { name: 'Settings of Capped line' });
  await form.getByText('Cap per chat (empty: none)').waitFor();

  await form.getByLabel('Messages to one chat').fill('0');
  await form.getByLabel('Per', { exact: true }).selectOption('day');
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.locator(`#set-${id}-limit-chatCap-count-error`).waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body.chatCap).toBeNull();

  await form.getByLabel('Messages to one chat').fill('3');
  await form.getByLabel('Per', { exact: true }).selectOption('week');
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Settings saved.').waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body.chatCap).toEqual({ count: 3, per: 'week' });
  expect(await form.getByLabel('Messages to one chat').inputValue()).toBe('3');

  await form.getByLabel('Messages to one chat').fill('');
  await form.getByLabel('Per', { exact: true }).selectOption('');
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Settings saved.').waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body.chatCap).toBeNull();
  expect(patches).toEqual([{ chatCap: { count: 0, per: 'day' } }, { chatCap: { count: 3, per: 'week' } }, { chatCap: null }]);
  await page.context().close();
}, 60_000);

test('Add account: a new account is given its cap per chat', async () => {
  const token = await tenant(suite, 'Chat cap add');
  const page = await open(suite, token, '#/accounts');
  await page.getByRole('button', { name: 'Add account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add account' });
  await dialog.getByLabel('Platform', { exact: true }).selectOption('http');
  await dialog.getByLabel('Name', { exact: true }).fill('Capped from the start');
  await dialog.getByLabel('Account id on the platform').fill('chat-cap-new');
  await dialog.getByLabel('API key').fill(API_KEY);
  await dialog.getByLabel('Messages to one chat').fill('2');
  await dialog.getByLabel('Per', { exact: true }).selectOption('day');
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.waitFor({ state: 'hidden' });
  const [saved] = (await api(suite.stack, 'GET', '/v1/accounts', token)).body.items;
  expect(saved).toMatchObject({ name: 'Capped from the start', chatCap: { count: 2, per: 'day' } });
  await page.context().close();
}, 60_000);
