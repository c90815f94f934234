import type { Page } from 'playwright-core';
import { downloadedText, screenshots } from '../helpers/browser.js';
import { api } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { consoleSuite, open, tenant } from './console-kit.js';

// The Audiences page against the real stack: a CSV file previewed before it is saved (a bad row
// named by line and column, nothing saved), imported, then its chats searched, paged, exported
// and removed.

const suite = consoleSuite();

const csv = (name: string, text: string) => ({ name, mimeType: 'text/csv', buffer: Buffer.from(text) });
const memberIds = (page: Page) => page.locator('.members tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-chat-id')));

test('a CSV with a bad row names its line and column and saves nothing; a good one shows its first rows, then imports', async () => {
  const token = await tenant(suite, 'Audiences');
  const page = await open(suite, token, '#/audiences');
  await page.getByRole('heading', { name: 'Audiences', exact: true }).waitFor();
  await page.getByText('No audiences yet.').waitFor();

  await page.getByLabel('New audience name').fill('Regulars');
  await page.getByLabel('CSV file (a chatId column, one column per variable)').setInputFiles(csv('regulars.csv', 'chatId,name\nr-1,Ana\n,Bob\nr-3,Chloé\n'));
  const problems = page.getByRole('alert').filter({ hasText: 'Nothing was saved' });
  await problems.waitFor();
  expect(await problems.innerText()).toMatch(/line 3/);
  await page.getByRole('button', { name: 'Cancel import' }).click();
  await eventually('the empty audience gone', async () => (await api(suite.stack, 'GET', '/v1/audiences', token)).body.items.length === 0);

  const rows = Array.from({ length: 60 }, (_, i) => `a-${i + 1};Person ${i + 1};"Town, ${i % 3}"`);
  await page.getByLabel('New audience name').fill('Regulars');
  await page
    .getByLabel('CSV file (a chatId column, one column per variable)')
    .setInputFiles(csv('regulars.csv', `\uFEFFchatId;name;town\n${rows.join('\n')}\n`));
  const preview = page.getByRole('region', { name: 'Import preview' });
  await preview.waitFor();
  expect(await preview.innerText()).toContain('60 new and 0 updated');
  expect(await preview.locator('tbody tr').count()).toBe(10);
  expect(await preview.locator('tbody tr').first().innerText()).toBe('a-1\tPerson 1\tTown, 0');
  const [draft] = (await api(suite.stack, 'GET', '/v1/audiences', token)).body.items;
  expect(draft.memberCount).toBe(0); // the preview saved no member
  await screenshots(page, 'audiences-import');

  await preview.getByRole('button', { name: 'Import 60 chats' }).click();
  const listed = page.getByRole('table', { name: 'Audiences' }).locator(`tr[data-audience-id="${draft.id}"]`);
  await listed.waitFor();
  expect(await listed.innerText()).toContain('60');
  await page.context().close();
}, 60_000);

test('one audience: its chats paged and searched, exported as CSV, one removed', async () => {
  const token = await tenant(suite, 'Members');
  const members = Array.from({ length: 60 }, (_, i) => ({ chatId: `m-${i + 1}`, vars: { name: `N${i + 1}` } }));
  const created = await api(suite.stack, 'POST', '/v1/audiences', token, { name: 'Sixty', members });
  expect(created.status).toBe(201);
  const page = await open(suite, token, `#/audiences/${created.body.id}`, { acceptDownloads: true });
  await page.getByRole('heading', { name: 'Sixty' }).waitFor();
  await page.getByText('60 chats').first().waitFor();
  await eventually('the first page', async () => (await memberIds(page)).length === 50);
  await page.getByRole('button', { name: 'Next chats' }).click();
  await eventually('the second page', async () => (await memberIds(page)).length === 10);
  await page.getByLabel('Search chats').fill('m-4');
  await eventually(
    'the search',
    async () =>
      JSON.stringify((await memberIds(page)).sort()) ===
      JSON.stringify(['m-4', 'm-40', 'm-41', 'm-42', 'm-43', 'm-44', 'm-45', 'm-46', 'm-47', 'm-48', 'm-49'].sort()),
  );
  await screenshots(page, 'audience');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  const text = await downloadedText(download);
  expect(text.split(/\r?\n/).filter(Boolean)).toHaveLength(61);
  expect(text).toMatch(/m-60[,;]N60/);

  await page.getByRole('button', { name: 'Remove m-4', exact: true }).click();
  await page.getByText('59 chats').first().waitFor();
  expect((await api(suite.stack, 'GET', `/v1/audiences/${created.body.id}`, token)).body.memberCount).toBe(59);
  await page.context().close();
}, 60_000);
