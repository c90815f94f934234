import type { Locator, Page } from 'playwright-core';
import { expectAccessible } from '../helpers/page-checks.js';
import { api } from '../helpers/stack.js';
import { account, API_KEY, campaign, consoleSuite, open, runNow, tenant } from './console-kit.js';

// Every page of the console once, checked by axe-core (no serious or critical violation; the
// screenshots() of the other files check the states they show), and the way in by keyboard
// alone: sign in, a campaign created and an account added with Tab, typing, Space and Enter.
// Like every console file, no error may be logged in the browser meanwhile (console-kit.ts).

const suite = consoleSuite();

/** Presses Tab until `target` has the focus: it must be reachable by keyboard, in a sensible number of steps. */
async function tabTo(page: Page, target: Locator, most = 60): Promise<void> {
  for (let i = 0; i < most; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el === el.ownerDocument.activeElement)) return;
  }
  throw new Error(`${target} not reached in ${most} presses of Tab`);
}

test('every page, its dialogs and forms open: axe-core finds no serious or critical violation', async () => {
  const token = await tenant(suite, 'Every page');
  const acc = await account(suite, token, 'every-page-acc', 6000, 'Shop line');
  const audience = await api(suite.stack, 'POST', '/v1/audiences', token, { name: 'Guests', members: [{ chatId: 'guest-1', vars: { name: 'Ana' } }] });
  expect(audience.status).toBe(201);
  const id = await campaign(suite, token, { accountId: acc, name: 'Greeting', targets: ['ep-1', 'ep-2'], audienceIds: [audience.body.id] });
  const run = await runNow(suite, token, id);

  const page = await open(suite, token);
  await page.locator(`li[data-run-id="${run}"]`).waitFor();
  await expectAccessible(page, 'activity');
  const visit = async (hash: string, heading: string | RegExp, where: string) => {
    await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    await expectAccessible(page, where);
  };
  await visit(`#/runs/${run}`, /Greeting/, 'run');
  await page.locator('td[data-label]').first().waitFor();
  await expectAccessible(page, 'run with its chats');
  await visit('#/campaigns', 'Campaigns', 'campaigns');
  await visit(`#/campaigns/${id}`, 'Greeting', 'campaign');
  await visit('#/campaigns/new', 'New campaign', 'new campaign');
  await visit(`#/campaigns/${id}/edit`, 'Edit Greeting', 'edit campaign');
  await visit('#/audiences', 'Audiences', 'audiences');
  await visit(`#/audiences/${audience.body.id}`, /Guests/, 'audience');
  await visit('#/accounts', 'Accounts', 'accounts');
  const card = page.locator(`li[data-account-id="${acc}"]`);
  await card.getByRole('button', { name: 'Show chats of Shop line' }).click();
  await card.getByRole('button', { name: 'Settings of Shop line' }).click();
  await page.getByRole('form', { name: 'Settings of Shop line' }).waitFor();
  await expectAccessible(page, 'account settings and chats');
  await page.getByRole('button', { name: 'Add account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add account' });
  for (const platform of ['http', 'telegram', 'whatsapp', 'telegram_user']) {
    await dialog.getByLabel('Platform', { exact: true }).selectOption(platform);
    await expectAccessible(page, `add account (${platform})`);
  }
  await page.context().close();
}, 60_000);

test('by keyboard alone: sign in, create a campaign, add an account', async () => {
  const token = await tenant(suite, 'Keyboard');
  await account(suite, token, 'keyboard-acc', 6000, 'Keyboard line');
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${suite.stack.apiUrl}/`);
  await tabTo(page, page.getByLabel('Tenant or admin token'));
  await page.keyboard.type(token);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Activity' }).waitFor();
  await expectAccessible(page, 'activity, signed in');

  await tabTo(page, page.getByRole('link', { name: 'Campaigns' }));
  await page.keyboard.press('Enter');
  await tabTo(page, page.getByRole('link', { name: 'New campaign' }));
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await tabTo(page, page.getByLabel('Name', { exact: true }));
  await page.keyboard.type('Typed campaign');
  // the only account is chosen already; typed chat ids instead of picked ones
  await tabTo(page, page.getByLabel('Chats (one chat id a line)'));
  await page.keyboard.type('kb-1\nkb-2');
  await tabTo(page, page.getByLabel('Text', { exact: true }));
  await page.keyboard.type('Hello by keyboard');
  await tabTo(page, page.getByLabel('Repeats'));
  await page.keyboard.type('At an');
  await tabTo(page, page.getByLabel('Every', { exact: true }));
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.type('60');
  const active = page.getByLabel(/^Active/);
  await tabTo(page, active);
  if (await active.isChecked()) await page.keyboard.press('Space');
  expect(await active.isChecked()).toBe(false);
  await tabTo(page, page.getByRole('button', { name: 'Create campaign' }));
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Typed campaign', level: 1 }).waitFor();
  const [created] = (await api(suite.stack, 'GET', '/v1/campaigns', token)).body.items;
  expect(created).toMatchObject({ name: 'Typed campaign', active: false, schedule: { type: 'interval', everySeconds: 3600 } });
  expect(created.targets).toEqual(['kb-1', 'kb-2']);

  await tabTo(page, page.getByRole('link', { name: 'Accounts' }));
  await page.keyboard.press('Enter');
  await tabTo(page, page.getByRole('button', { name: 'Add account' }));
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Add account' });
  await dialog.waitFor();
  // the dialog takes the focus; the platform stays the first one offered (http)
  await tabTo(page, dialog.getByLabel('Name', { exact: true }));
  await page.keyboard.type('Typed line');
  await tabTo(page, dialog.getByLabel('Account id on the platform'));
  await page.keyboard.type('keyboard-acc-2');
  await tabTo(page, dialog.getByLabel('API key'));
  await page.keyboard.type(API_KEY);
  await tabTo(page, dialog.getByRole('button', { name: 'Save account' }));
  await page.keyboard.press('Enter');
  await dialog.waitFor({ state: 'hidden' });
  const saved = (await api(suite.stack, 'GET', '/v1/accounts', token)).body.items.find((a: { name: string }) => a.name === 'Typed line');
  expect(saved).toMatchObject({ platform: 'http', externalId: 'keyboard-acc-2', status: 'active' });
  await context.close();
}, 60_000);
