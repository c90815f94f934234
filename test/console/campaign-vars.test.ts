import type { Page } from 'playwright-core';
import { api } from '../helpers/stack.js';
import { account, campaign, consoleSuite, open, tenant } from './console-kit.js';

// Personal messages in the console: the campaign page lists each chat's variables, and an edit
// in the browser never loses them (they are set through the API; the form keeps them with their
// chats and sends targets only when the chat list changed).

const suite = consoleSuite();

const field = (page: Page, label: string) => page.getByLabel(label, { exact: true });

test('a campaign with chat variables edited in the browser keeps its variables', async () => {
  const token = await tenant(suite, 'Vars');
  const acc = await account(suite, token, 'vars-acc', 6000, 'Vars account');
  const targets = [
    { chatId: 'v-1', vars: { name: 'Ann', city: 'Oslo' } },
    { chatId: 'v-2', vars: { name: 'Bo' } },
  ];
  const id = await campaign(suite, token, { accountId: acc, name: 'Greetings', messages: [{ type: 'text', text: '{Hi|Hello} {{name}}' }], targets });
  const page = await open(suite, token, `#/campaigns/${id}`);
  await page.getByRole('heading', { name: 'Greetings', exact: true }).waitFor();
  const listed = await page.locator('ul.chat-vars').innerText();
  expect(listed).toContain('v-1: city=Oslo · name=Ann');
  expect(listed).toContain('v-2: name=Bo');

  const patches: unknown[] = [];
  page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.postDataJSON()));
  const edit = async () => {
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: /^Edit / }).waitFor();
  };

  // Another field changed: no targets sent, the variables stay.
  await edit();
  expect(await field(page, 'Chats (one chat id a line)').inputValue()).toBe('v-1\nv-2');
  expect(await page.locator('#targets-vars').innerText()).toContain('v-1 (city, name)');
  await field(page, 'Name').fill('Greetings again');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('heading', { name: 'Greetings again', exact: true }).waitFor();
  expect((await api(suite.stack, 'GET', `/v1/campaigns/${id}`, token)).body.targets).toEqual(targets);

  // A chat added without variables: the API's 400 names its line; the chats kept keep theirs.
  await edit();
  await field(page, 'Chats (one chat id a line)').fill('v-1\nv-2\nv-3');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#targets-error').waitFor();
  expect(await page.locator('#targets-error').innerText()).toContain('line 3');
  // One chat removed: the one left goes with its variables.
  await field(page, 'Chats (one chat id a line)').fill('v-1');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('heading', { name: 'Greetings again', exact: true }).waitFor();
  expect(patches).toEqual([{ name: 'Greetings again' }, { targets: [...targets, 'v-3'] }, { targets: [targets[0]] }]);
  expect((await api(suite.stack, 'GET', `/v1/campaigns/${id}`, token)).body.targets).toEqual([targets[0]]);
  await page.context().close();
}, 60_000);
