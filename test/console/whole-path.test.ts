import type { Page } from 'playwright-core';
import { screenshots } from '../helpers/browser.js';
import { received, repeats } from '../helpers/platform-record.js';
import { sandbox } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { API_KEY, consoleSuite, tenant } from './console-kit.js';

// Issue 33's "done when": the whole job in the console, with no API call of the test's own once
// the tenant exists (the console makes no tenants): sign in, add an http account, sync its chats
// from the sandbox, pick three chats by typing part of their titles, add an audience imported
// from a CSV file, create the campaign, send a test, run it, and watch the run reach every picked
// and imported chat once. The sandbox is read for the titles it gives the account's chats and
// for what it received.

const suite = consoleSuite();

interface PlatformChat {
  chatId: string;
  title: string;
}

/** Chats whose title no other chat shares, so typing part of it finds that chat. */
function distinct(chats: PlatformChat[]): PlatformChat[] {
  const count = new Map<string, number>();
  for (const c of chats) count.set(c.title, (count.get(c.title) ?? 0) + 1);
  return chats.filter((c) => count.get(c.title) === 1);
}

async function pick(page: Page, search: string, chat: PlatformChat): Promise<void> {
  // part of the title: all but its first two letters, in lower case
  const part = chat.title.slice(2).toLowerCase();
  await page.getByLabel(search).fill(part);
  await page.locator(`.picker-results li[data-chat-id="${chat.chatId}"] button`).click();
}

test('the whole job in the console: account, directory, picked chats, an imported audience, a test, the run at the platform', async () => {
  const token = await tenant(suite, 'Whole path');
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${suite.stack.apiUrl}/`);
  await page.getByLabel('Tenant or admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Activity' }).waitFor();

  // add the account
  await page.getByRole('link', { name: 'Accounts' }).click();
  await page.getByRole('button', { name: 'Add account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add account' });
  await dialog.getByLabel('Platform', { exact: true }).selectOption('http');
  await dialog.getByLabel('Name', { exact: true }).fill('Whole path');
  await dialog.getByLabel('Account id on the platform').fill('whole-acc');
  await dialog.getByLabel('API key').fill(API_KEY);
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.waitFor({ state: 'hidden' });

  // sync its chats
  await page.getByRole('button', { name: 'Sync chats of Whole path' }).click();
  await page.getByText(/^60 chats, last synced /).waitFor({ timeout: 30_000 });
  const { chats } = await sandbox<{ chats: PlatformChat[] }>(suite.stack, '/sandbox/accounts/whole-acc/directory');
  const [a, b, c, tested] = distinct(chats);
  expect(tested).toBeDefined();

  // the campaign: three picked chats and an audience from a CSV file
  await page.getByRole('link', { name: 'Campaigns' }).click();
  await page.getByRole('link', { name: 'New campaign' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Whole path campaign');
  for (const chat of [a!, b!, c!]) await pick(page, 'Find chats by name', chat);
  const picked = await page
    .getByRole('list', { name: 'Picked chats' })
    .locator('li')
    .evaluateAll((l) => l.map((x) => x.getAttribute('data-chat-id')));
  expect(picked).toEqual([a!.chatId, b!.chatId, c!.chatId]);
  await page.getByRole('button', { name: 'Import a CSV as a new audience' }).click();
  await page.getByLabel('New audience name').fill('Imported');
  const imported = ['imp-1', 'imp-2', 'imp-3', 'imp-4'];
  const file = `chatId,name\n${imported.map((id, i) => `${id},Guest ${i + 1}`).join('\n')}\n`;
  await page
    .getByLabel('CSV file (a chatId column, one column per variable)')
    .setInputFiles({ name: 'guests.csv', mimeType: 'text/csv', buffer: Buffer.from(file) });
  await page.getByRole('region', { name: 'Import preview' }).getByRole('button', { name: 'Import 4 chats' }).click();
  await page.getByLabel('Imported (4 chats)').waitFor();
  expect(await page.getByLabel('Imported (4 chats)').isChecked()).toBe(true);
  await page.getByLabel('Text', { exact: true }).fill('See you on Saturday');
  await page.getByLabel('Repeats', { exact: true }).selectOption('once');
  await page.getByLabel("At (in the campaign's timezone)").fill(`${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}T09:00`);
  await page.getByLabel('Timezone', { exact: true }).fill('UTC');
  await page.getByLabel('Active: the schedule makes runs').uncheck();
  await screenshots(page, 'whole-path-form');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('heading', { name: 'Whole path campaign' }).waitFor();

  // a test to a fourth chat, before the campaign goes live
  await pick(page, 'Test chat: find by name', tested!);
  await page.getByRole('button', { name: 'Send test' }).click();
  await page.getByText(`Test sent to ${tested!.title}`).waitFor();
  await eventually(
    'the test at the platform',
    async () => (await received(suite.stack)).some((m) => m.account === 'whole-acc' && m.chatId === tested!.chatId),
    30_000,
    200,
  );
  await page.locator('li[data-run-id] .pill-success').first().waitFor({ timeout: 30_000 });
  await screenshots(page, 'whole-path-test-sent');

  // the run reaches every picked and imported chat once
  await page.getByRole('button', { name: 'Run now' }).click();
  const everyone = [a!.chatId, b!.chatId, c!.chatId, ...imported].sort();
  await eventually(
    'the run at the platform',
    async () => {
      const got = (await received(suite.stack)).filter((m) => m.account === 'whole-acc' && m.chatId !== tested!.chatId).map((m) => m.chatId);
      return JSON.stringify([...got].sort()) === JSON.stringify(everyone);
    },
    60_000,
    200,
  );
  await eventually('both runs shown done', async () => (await page.locator('li[data-run-id] .pill-success').count()) === 2, 30_000, 200);
  const record = (await received(suite.stack)).filter((m) => m.account === 'whole-acc');
  expect(repeats(record)).toEqual([]);
  expect(record.map((m) => m.chatId).sort()).toEqual([...everyone, tested!.chatId].sort());
  expect(new Set(record.map((m) => m.part.text))).toEqual(new Set(['See you on Saturday']));
  await context.close();
}, 180_000);
