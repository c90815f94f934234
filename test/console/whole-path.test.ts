import type { Page } from 'playwright-core';
import { screenshots } from '../helpers/browser.js';
import { received, repeats } from '../helpers/platform-record.js';
import { sandbox } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { API_KEY, consoleSuite, tenant } from './console-kit.js';

// Issue 33's "done when", with issue 51's: the whole job in the console, with no API call of the
// test's own once the tenant exists (the console makes no tenants): sign in, add an http account,
// sync its chats from the sandbox, pick three groups by typing part of their titles, add an
// audience of five guests imported from a CSV file, write "Hello {{name|friends}}", create the
// campaign with the form's defaults (inactive: nothing goes out; ticked Active, Create first asks
// "Send to 8 chats now?"), send a test, activate it (asked again, with the reach), and watch the
// run reach every group ("Hello friends") and guest (their name) once. A second campaign gives
// one group its own name in the form, and names each chat by its directory title ({{chat.title}}). The sandbox is read for the titles it gives the account's
// chats and for what it received.

const suite = consoleSuite();

interface PlatformChat {
  chatId: string;
  title: string;
  kind: string;
}

/** Chats whose title no other chat shares, so typing part of it finds that chat. */
function distinct(chats: PlatformChat[]): PlatformChat[] {
  const count = new Map<string, number>();
  for (const c of chats) count.set(c.title, (count.get(c.title) ?? 0) + 1);
  return chats.filter((c) => count.get(c.title) === 1);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function pick(page: Page, search: string, chat: PlatformChat): Promise<void> {
  // part of the title: all but its first two letters, in lower case
  const part = chat.title.slice(2).toLowerCase();
  await page.getByLabel(search).fill(part);
  // the result the operator reads: its button named by the title shown (titles here are distinct)
  await page.getByRole('button', { name: new RegExp(`^Add ${escapeRegExp(chat.title)}(\\s|$)`) }).click();
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
  // a faster pace than the default 40 a minute: each run's 8 chats go out in a second, not 10
  await dialog.getByLabel('Pace (sends a minute)').fill('600');
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.waitFor({ state: 'hidden' });

  // sync its chats
  await page.getByRole('button', { name: 'Sync chats of Whole path' }).click();
  await page.getByText(/^60 chats, last synced /).waitFor({ timeout: 30_000 });
  const { chats } = await sandbox<{ chats: PlatformChat[] }>(suite.stack, '/sandbox/accounts/whole-acc/directory');
  const [a, b, c] = distinct(chats).filter((x) => x.kind === 'group');
  const tested = distinct(chats).find((x) => x.kind === 'direct');
  expect(c && tested).toBeDefined();
  const groups = [a!, b!, c!];
  const sent = async () => (await received(suite.stack)).filter((m) => m.account === 'whole-acc');
  const posts: unknown[] = [];
  page.on('request', (r) => r.method() === 'POST' && r.url().endsWith('/v1/campaigns') && posts.push(r.postDataJSON()));

  // the campaign: three picked groups and an audience of five guests from a CSV file
  await page.getByRole('link', { name: 'Campaigns' }).click();
  await page.getByRole('link', { name: 'New campaign' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Whole path campaign');
  // the defaults never surprise: inactive, once, at a time shown
  expect(await page.getByLabel('Active: the schedule makes runs').isChecked()).toBe(false);
  expect(await page.getByLabel('Repeats', { exact: true }).inputValue()).toBe('once');
  for (const chat of groups) await pick(page, 'Find chats by name', chat);
  const picked = await page
    .getByRole('list', { name: 'Picked chats' })
    .locator('li')
    .evaluateAll((l) => l.map((x) => x.getAttribute('data-chat-id')));
  expect(picked).toEqual(groups.map((g) => g.chatId));
  await page.getByRole('button', { name: 'Import a CSV as a new audience' }).click();
  await page.getByLabel('New audience name').fill('Imported');
  const guests = [1, 2, 3, 4, 5].map((i) => ({ chatId: `imp-${i}`, name: `Guest ${i}` }));
  const file = `chatId,name\n${guests.map((g) => `${g.chatId},${g.name}`).join('\n')}\n`;
  await page
    .getByLabel('CSV file (a chatId column, one column per variable)')
    .setInputFiles({ name: 'guests.csv', mimeType: 'text/csv', buffer: Buffer.from(file) });
  await page.getByRole('region', { name: 'Import preview' }).getByRole('button', { name: 'Import 5 chats' }).click();
  await page.getByLabel('Imported (5 chats)').waitFor();
  expect(await page.getByLabel('Imported (5 chats)').isChecked()).toBe(true);
  await page.getByLabel('Text', { exact: true }).fill('Hello {{name|friends}}');
  // each picked group gets a field for name, optional: empty, it gets the fallback
  expect(await page.getByLabel(`name for ${a!.title}`).getAttribute('placeholder')).toBe('empty: “friends”');

  // ticked Active, the campaign would send at once: Create asks first, with the reach
  await page.getByLabel('Active: the schedule makes runs').check();
  await page.getByRole('button', { name: 'Create campaign' }).click();
  const ask = page.getByRole('group', { name: 'Confirm sending now' });
  await ask.waitFor();
  expect(await ask.innerText()).toContain(
    "Send to 8 chats now? The first run starts within a minute: 8 chats (3 picked + 5 audience members − 0 suppressed − 0 can't post).",
  );
  await ask.getByRole('button', { name: 'Not yet' }).click();
  await ask.waitFor({ state: 'detached' });
  expect(posts).toEqual([]);
  await page.getByLabel('Active: the schedule makes runs').uncheck();
  await screenshots(page, 'whole-path-form');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('heading', { name: 'Whole path campaign' }).waitFor();
  expect(posts).toEqual([expect.objectContaining({ active: false, targets: groups.map((g) => g.chatId), schedule: { type: 'once', at: expect.any(String) } })]);
  const facts = page.locator('dl.facts').first(); // the campaign's (a run's has its own)
  await facts.getByText('8 chats').waitFor();
  expect(await facts.innerText()).toContain('Inactive');
  expect(await facts.innerText()).toContain("8 chats (3 picked + 5 audience members − 0 suppressed − 0 can't post)");

  // a test to a fifth chat, before the campaign goes live: the fallback, as a chat without a name gets it
  await pick(page, 'Test chat: find by name', tested!);
  await page.getByRole('button', { name: 'Send test' }).click();
  await page.getByText(`Test sent to ${tested!.title}`).waitFor();
  await eventually('the test at the platform', async () => (await sent()).some((m) => m.chatId === tested!.chatId), 30_000, 200);
  await page.locator('li[data-run-id] .pill-success').first().waitFor({ timeout: 30_000 });
  await screenshots(page, 'whole-path-test-sent');

  // activated: it would send at once, so it asks first; nothing goes out until the yes
  await page.getByRole('button', { name: 'Activate', exact: true }).click();
  await ask.waitFor();
  expect(await ask.innerText()).toContain('Send to 8 chats now?');
  expect(await facts.innerText()).toContain('Inactive');
  expect((await sent()).map((m) => m.chatId)).toEqual([tested!.chatId]);
  await ask.getByRole('button', { name: 'Yes, activate and send now' }).click();
  const expected = new Map([
    [tested!.chatId, 'Hello friends'],
    ...groups.map((g): [string, string] => [g.chatId, 'Hello friends']),
    ...guests.map((g): [string, string] => [g.chatId, `Hello ${g.name}`]),
  ]);
  await eventually('the run at the platform', async () => (await sent()).length === expected.size, 60_000, 200);
  await eventually('both runs shown done', async () => (await page.locator('li[data-run-id] .pill-success').count()) === 2, 30_000, 200);
  const record = await sent();
  expect(repeats(record)).toEqual([]);
  expect(new Map(record.map((m) => [m.chatId, m.part.text]))).toEqual(expected);

  // a second campaign gives one group its own name in the form; the others keep the fallback
  await page.getByRole('link', { name: 'Campaigns', exact: true }).click();
  await page.getByRole('link', { name: 'New campaign' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Named group');
  for (const chat of groups) await pick(page, 'Find chats by name', chat);
  await page.getByLabel('Imported (5 chats)').check();
  await page.getByLabel('Text', { exact: true }).fill('Hi {{name|friends}}, from {{chat.title|your chat}}');
  await page.getByLabel(`name for ${b!.title}`).fill('Book club');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('heading', { name: 'Named group' }).waitFor();
  expect(posts[1]).toMatchObject({ targets: [a!.chatId, { chatId: b!.chatId, vars: { name: 'Book club' } }, c!.chatId] });
  await page.getByRole('button', { name: 'Run now' }).click();
  await eventually('the second run at the platform', async () => (await sent()).length === expected.size + 8, 60_000, 200);
  const second = (await sent()).slice(expected.size);
  expect(repeats(second)).toEqual([]);
  expect(new Map(second.map((m) => [m.chatId, m.part.text]))).toEqual(
    new Map([
      [a!.chatId, `Hi friends, from ${a!.title}`],
      [b!.chatId, `Hi Book club, from ${b!.title}`],
      [c!.chatId, `Hi friends, from ${c!.title}`],
      // the guests' chats are in no directory: the built-in's fallback
      ...guests.map((g): [string, string] => [g.chatId, `Hi ${g.name}, from your chat`]),
    ]),
  );
  await context.close();
}, 180_000);
