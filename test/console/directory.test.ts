import type { Page } from 'playwright-core';
import { screenshots } from '../helpers/browser.js';
import { api, sandbox } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { account, consoleSuite, open, tenant } from './console-kit.js';

// The chat directory in the console against the real stack: Sync chats on the account card
// fills it from the sandbox (the platform lists the account's chats, titled), its chats searched
// and paged there; and the campaign form's chat picker finding chats by part of their title,
// greying a chat the account cannot post in, its picked chats becoming the campaign's chats.

const suite = consoleSuite();

interface PlatformChat {
  chatId: string;
  title: string | null;
  kind: 'group' | 'direct';
  memberCount: number | null;
  canSend: boolean;
}
const card = (page: Page, id: string) => page.locator(`li[data-account-id="${id}"]`);
const rowIds = (page: Page, id: string) =>
  card(page, id)
    .locator('table.chats tbody tr')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-chat-id')));

async function setDirectory(externalId: string, chats: PlatformChat[]): Promise<void> {
  const res = await fetch(`${suite.stack.sandboxUrl}/sandbox/accounts/${externalId}/directory`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chats }),
  });
  expect(res.status).toBe(200);
}

test('the directory synced from the platform is searched by part of a title and paged on the card; Sync chats brings it up to date', async () => {
  const token = await tenant(suite, 'Directory');
  const id = await account(suite, token, 'dir-acc', 6000, 'Directory account');
  const { chats } = await sandbox<{ chats: PlatformChat[] }>(suite.stack, '/sandbox/accounts/dir-acc/directory');
  expect(chats).toHaveLength(60);
  const page = await open(suite, token, '#/accounts');
  // an http account asks for its first sync when it is made
  await card(page, id)
    .getByText(/^60 chats, last synced /)
    .waitFor({ timeout: 30_000 });
  await card(page, id).getByRole('button', { name: 'Show chats of Directory account' }).click();
  await card(page, id).getByRole('table', { name: 'Chats of Directory account' }).waitFor();
  const first = await rowIds(page, id);
  expect(first).toHaveLength(20);
  await card(page, id).getByRole('button', { name: 'Next chats' }).click();
  await eventually('the second page', async () => (await rowIds(page, id))[0] !== first[0]);
  const second = await rowIds(page, id);
  expect(second).toHaveLength(20);
  expect(second.filter((c) => first.includes(c))).toEqual([]);

  // a word of one chat's title, typed in lower case: every chat whose title holds it, none other
  const word = chats[6]!.title!.split(' ').at(-1)!.toLowerCase();
  const expected = chats
    .filter((c) => c.title!.toLowerCase().includes(word))
    .map((c) => c.chatId)
    .sort();
  expect(expected.length).toBeLessThanOrEqual(20);
  await card(page, id).getByLabel('Search chats of Directory account').fill(word);
  await eventually('the search answered', async () => JSON.stringify([...(await rowIds(page, id))].sort()) === JSON.stringify(expected));
  await screenshots(page, 'accounts-directory');

  // the platform's chats change: Sync chats adds the new one, and keeps the one gone as left
  await setDirectory('dir-acc', [...chats.slice(1), { chatId: 'chat-new', title: 'Brand New Group', kind: 'group', memberCount: 5, canSend: true }]);
  await card(page, id).getByRole('button', { name: 'Sync chats of Directory account' }).click();
  await card(page, id)
    .getByText(/^61 chats, last synced /)
    .waitFor({ timeout: 30_000 });
  await card(page, id).getByLabel('Search chats of Directory account').fill('brand new');
  await eventually('the new chat found', async () => JSON.stringify(await rowIds(page, id)) === JSON.stringify(['chat-new']));
  await card(page, id).getByLabel('Search chats of Directory account').fill('chat-1');
  await card(page, id).locator('tr[data-chat-id="chat-1"]').waitFor();
  expect(await card(page, id).locator('tr[data-chat-id="chat-1"]').innerText()).toContain("can't post here: the account left");
  await page.context().close();
}, 90_000);

test("the chat picker finds chats by part of their title (any case, accents folded), greys one the account can't post in, and the picked chats are the campaign's", async () => {
  const token = await tenant(suite, 'Picker');
  // The platform's directory is set before the account exists: an http account syncs by itself
  // when created, and a sync asked while that one runs adds nothing.
  await setDirectory('pick-acc', [
    { chatId: 'p-1', title: 'Riverside Book Club', kind: 'group', memberCount: 12, canSend: true },
    { chatId: 'p-2', title: 'Riverside Choir', kind: 'group', memberCount: 30, canSend: true },
    { chatId: 'p-3', title: 'Riverside Announcements', kind: 'group', memberCount: 200, canSend: false },
    { chatId: 'p-4', title: 'Zoë Müller', kind: 'direct', memberCount: 2, canSend: true },
  ]);
  const id = await account(suite, token, 'pick-acc', 6000, 'Picker account');
  expect((await api(suite.stack, 'POST', `/v1/accounts/${id}/chats/sync`, token)).status).toBe(202);
  await eventually('the directory synced', async () => (await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body.directory?.size === 4, 30_000, 200);

  const page = await open(suite, token, '#/campaigns/new');
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('Picker campaign');
  await page.getByLabel('Account', { exact: true }).selectOption(id);
  await page.getByLabel('Find chats by name').fill('RIVERSIDE');
  const results = page.getByRole('list', { name: 'Chats matching RIVERSIDE' });
  await results.waitFor();
  expect(await results.locator('li').count()).toBe(3);
  const closed = results.locator('li[data-chat-id="p-3"]');
  expect(await closed.innerText()).toContain("can't post here");
  expect(await closed.getByRole('button').isDisabled()).toBe(true);
  expect(await results.locator('li[data-chat-id="p-1"]').innerText()).toContain('group · 12 members');
  await page.getByRole('button', { name: 'Add Riverside Book Club' }).click();
  await page.getByRole('button', { name: 'Add Riverside Choir' }).click();
  await page.getByLabel('Find chats by name').fill('zoe mu');
  await page.getByRole('button', { name: 'Add Zoë Müller' }).click();
  const picked = page.getByRole('list', { name: 'Picked chats' });
  expect(await picked.locator('li').evaluateAll((l) => l.map((x) => x.getAttribute('data-chat-id')))).toEqual(['p-1', 'p-2', 'p-4']);
  await screenshots(page, 'campaign-chat-picker');
  await picked.getByRole('button', { name: 'Remove Riverside Choir' }).click();

  await page.getByLabel('Chats (one chat id a line)', { exact: true }).fill('raw-1');
  await page.getByLabel('Text', { exact: true }).fill('Hello');
  await page.getByLabel('Active: the schedule makes runs').uncheck();
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('heading', { name: 'Picker campaign' }).waitFor();
  const [saved] = (await api(suite.stack, 'GET', '/v1/campaigns', token)).body.items;
  expect(saved.targets).toEqual(['raw-1', 'p-1', 'p-4']);
  await page.context().close();
}, 90_000);
