import type { Page } from 'playwright-core';
import { api } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { account, campaign, consoleSuite, open, tenant } from './console-kit.js';

// Personal messages in the console: the campaign page lists each chat's variables, and an edit
// in the browser never loses them (they are set through the API; the form keeps them with their
// chats and sends targets only when the chat list changed); picked chats get a field per variable
// the message uses, and go as {chatId, vars}; the preview shows the message as one chosen chat
// gets it, a fallback's spot marked.

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
  // each by the name the operator knows it by (here the chat's own `name`: no directory lists it)
  await page.locator('ul.chat-vars li', { hasText: 'v-2' }).locator('strong', { hasText: 'Bo' }).waitFor();
  expect(await page.locator('ul.chat-vars').innerText()).toContain('Ann v-1: city=Oslo · name=Ann');

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

test('a picked chat gets a field for each variable the message needs; the preview renders a chosen chat, its fallbacks marked; one left empty is refused beside it, by its title; filled, it goes as {chatId, vars}', async () => {
  const token = await tenant(suite, 'Picked vars');
  // the platform's directory, set before the account exists: an http account syncs by itself when created
  const res = await fetch(`${suite.stack.sandboxUrl}/sandbox/accounts/pv-acc/directory`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      chats: [
        { chatId: 'pv-1', title: 'Café Central', kind: 'group', memberCount: 9, canSend: true },
        { chatId: 'pv-2', title: 'Chess Club', kind: 'group', memberCount: 4, canSend: true },
      ],
    }),
  });
  expect(res.status).toBe(200);
  const acc = await account(suite, token, 'pv-acc', 6000, 'Picked account');
  await eventually('the directory synced', async () => (await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body.directory?.size === 2, 30_000, 200);
  const page = await open(suite, token, '#/campaigns/new');
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await field(page, 'Name').fill('Picked greetings');
  await field(page, 'Account').selectOption(acc);
  for (const title of ['Café Central', 'Chess Club']) {
    await field(page, 'Find chats by name').fill(title.toLowerCase());
    await page.getByRole('button', { name: `Add ${title}` }).click();
  }
  // the preview renders one chat: the first picked by default, then the one chosen by name, a fallback's spot marked
  await field(page, 'Text').fill('Hello {{name|friends}}, welcome to {{chat.title}}');
  await page.getByLabel('name for Café Central').fill('Ann');
  await page.getByRole('button', { name: 'Preview' }).click();
  const part = (text: string) => page.locator('.rendered-message .rendered-part', { hasText: text }).waitFor();
  await part('Hello Ann, welcome to Café Central');
  await field(page, 'Show the message as').selectOption({ label: 'Chess Club' });
  await part('Hello friends, welcome to Chess Club');
  const fallback = page.locator('.rendered-message mark');
  expect(await fallback.evaluateAll((marks) => marks.map((m) => `${m.textContent} [${m.getAttribute('title')}]`))).toEqual(['friends [fallback: friends]']);
  await field(page, 'Show the message as').selectOption({ label: 'Café Central' });
  await part('Hello Ann, welcome to Café Central');
  expect(await fallback.count()).toBe(0);
  await field(page, 'Text').fill('Hello {{name}}, welcome to {{chat.title}}');
  // a field for name beside each chat (chat.title is the directory's), needed: the tag has no fallback
  const cafe = page.getByLabel('name for Café Central');
  expect(await cafe.getAttribute('placeholder')).toBe('needed: no fallback');
  expect(await page.getByLabel(/^chat\.title for/).count()).toBe(0);
  await cafe.fill('Ann');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  const note = page.locator('#picked-1-var-name-error');
  await note.waitFor();
  expect(await note.innerText()).toContain('and chat “\u2068Chess Club\u2069” (\u2068pv-2\u2069) has no value for it');
  expect(await page.evaluate('document.activeElement.id')).toBe('picked-1-var-name');
  await page.getByLabel('name for Chess Club').fill('Bo');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('heading', { name: 'Picked greetings', exact: true }).waitFor();
  const [saved] = (await api(suite.stack, 'GET', '/v1/campaigns', token)).body.items;
  expect(saved.targets).toEqual([
    { chatId: 'pv-1', vars: { name: 'Ann' } },
    { chatId: 'pv-2', vars: { name: 'Bo' } },
  ]);
  await page.context().close();
}, 60_000);
