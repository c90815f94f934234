import type { Page } from 'playwright-core';
import { api } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { account, campaign, consoleSuite, open, tenant } from './console-kit.js';

// Forum topics in the campaign form, against the real stack: a picked chat's Topic field is the
// target's threadId (the same chat picked again for another topic is another target); an edit
// keeps a loaded campaign's topics and sends a changed one; the API's refusal of a topic on a
// platform without them shows beside the chats.

const suite = consoleSuite();

const topicOf = (page: Page, i: number) => page.getByRole('list', { name: 'Picked chats' }).locator('li').nth(i).getByRole('spinbutton');

test("a bot campaign's topics show on its picked chats; a changed topic is saved as such", async () => {
  const token = await tenant(suite, 'Topics');
  const bot = await api(suite.stack, 'POST', '/v1/accounts', token, {
    platform: 'telegram',
    name: 'Forum bot',
    credentials: { botToken: `123457:${'B'.repeat(35)}` },
  });
  expect(bot.status).toBe(201);
  const id = await campaign(suite, token, {
    accountId: bot.body.id,
    name: 'Forum news',
    targets: ['-1001', { chatId: '-1001', threadId: 5 }],
    schedule: { type: 'interval', everySeconds: 3600 },
    active: false,
  });
  const page = await open(suite, token, `#/campaigns/${id}`);
  await page.getByRole('heading', { name: 'Forum news' }).waitFor();
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.getByRole('heading', { name: 'Edit Forum news' }).waitFor();
  // the plain target is a typed line; the topic target a picked chat with its topic
  expect(await page.getByLabel('Chats (one chat id a line)', { exact: true }).inputValue()).toBe('-1001');
  expect(await topicOf(page, 0).inputValue()).toBe('5');
  expect(await page.getByLabel('Forum topic of -1001').count()).toBe(1);

  await topicOf(page, 0).fill('6');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await eventually('saved', async () => (await api(suite.stack, 'GET', `/v1/campaigns/${id}`, token)).body.targets[1]?.threadId === 6);
  expect((await api(suite.stack, 'GET', `/v1/campaigns/${id}`, token)).body.targets).toEqual(['-1001', { chatId: '-1001', threadId: 6 }]);
  await page.context().close();
}, 60_000);

test("a chat picked into a topic may be picked again; on a platform without forum topics the API's refusal shows beside the chats, naming the picked chat and its topic", async () => {
  const token = await tenant(suite, 'No topics');
  // the platform's directory is set before the account exists: an http account syncs by itself when created
  const res = await fetch(`${suite.stack.sandboxUrl}/sandbox/accounts/topic-http/directory`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chats: [{ chatId: 't-1', title: 'Topic Group', kind: 'group', memberCount: 3, canSend: true }] }),
  });
  expect(res.status).toBe(200);
  const acc = await account(suite, token, 'topic-http', 6000, 'Sandbox account');
  await eventually('the directory synced', async () => (await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body.directory?.size === 1, 30_000, 200);

  const page = await open(suite, token, '#/campaigns/new');
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('Topic campaign');
  await page.getByLabel('Account', { exact: true }).selectOption(acc);
  await page.getByLabel('Find chats by name').fill('topic group');
  await page.getByRole('button', { name: 'Add Topic Group' }).click();
  // picked without a topic: not offered again; given one, it is (for General, or another topic)
  expect(await page.getByRole('button', { name: 'Add Topic Group' }).isDisabled()).toBe(true);
  await topicOf(page, 0).fill('5');
  await page.getByRole('button', { name: 'Add Topic Group' }).click();
  expect(await page.getByRole('list', { name: 'Picked chats' }).locator('li').count()).toBe(2);
  await page.getByLabel('Text', { exact: true }).fill('Hello');
  await page.getByLabel('Active: the schedule makes runs').uncheck();
  const posted: { targets?: unknown }[] = [];
  page.on('request', (r) => r.method() === 'POST' && r.url().endsWith('/v1/campaigns') && posted.push(r.postDataJSON()));
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.locator('#targets-error').waitFor();
  expect(await page.locator('#targets-error').innerText()).toContain("picked chat t-1 (topic 5), topic: forum topics are Telegram's");
  expect(posted.map((b) => b.targets)).toEqual([[{ chatId: 't-1', threadId: 5 }, 't-1']]);
  expect((await api(suite.stack, 'GET', '/v1/campaigns', token)).body.items).toEqual([]);
  await page.context().close();
}, 90_000);
