import { screenshots } from '../helpers/browser.js';
import { received } from '../helpers/platform-record.js';
import { api } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { account, campaign, consoleSuite, open, tenant } from './console-kit.js';

// Send a test from the campaign page: rendered as one of the campaign's own chats, picked by name
// from its targets and audiences' members (no id typed from memory), its variables shown before
// sending and a missing one said; the test reaches the one chat given and shows in the run
// history as a test send.

const suite = consoleSuite();

test("Send a test is rendered as a campaign's chat picked by name, shows its variables and a missing one before sending, and goes to the chat given", async () => {
  const token = await tenant(suite, 'Test send');
  const acc = await account(suite, token, 'test-send-acc', 6000, 'Test send account');
  const audience = await api(suite.stack, 'POST', '/v1/audiences', token, { name: 'Guests', members: [{ chatId: 'guest-1', vars: { name: 'Ana' } }] });
  expect(audience.status).toBe(201);
  const id = await campaign(suite, token, {
    accountId: acc,
    name: 'Greeting',
    targets: [],
    audienceIds: [audience.body.id],
    messages: [{ type: 'text', text: 'Hi {{name}}, see you in {{city|town}}' }],
  });
  // a member added after the campaign was saved, without a name: its test would show the tag
  expect((await api(suite.stack, 'POST', `/v1/audiences/${audience.body.id}/members`, token, { members: [{ chatId: 'guest-2' }] })).status).toBe(200);
  const page = await open(suite, token, `#/campaigns/${id}`);
  await page.getByRole('heading', { name: 'Greeting' }).waitFor();
  const form = page.getByRole('form', { name: 'Send a test' });
  const chatsList = form.getByRole('list', { name: "The campaign's chats" });
  await chatsList.locator('li').nth(1).waitFor();
  expect(await chatsList.locator('li').allTextContents()).toEqual(['Render as Ana audience member · guest-1', 'Render as guest-2 audience member']);
  // no chat yet: {{name}} has no value, said before anything is sent
  const missing = form.locator('#testAs-missing');
  expect(await missing.innerText()).toBe("{{name}} has no value without one of the campaign's chats: the test shows it as written.");

  // found by name, any case; its variables shown as the test gets them
  await form.getByLabel("Render as one of the campaign's chats: find by name").fill('ANA');
  await chatsList.locator('li').nth(1).waitFor({ state: 'detached' });
  await form.getByRole('button', { name: /^Render as Ana/ }).click();
  const vars = form.getByRole('table', { name: 'Variables as Ana gets them' });
  expect(await vars.locator('tbody tr').allInnerTexts()).toEqual(['{{name}}\tAna', '{{city}}\ttown (the fallback)']);
  expect(await missing.count()).toBe(0);
  // another member, by its id: its missing name is said beside it
  await form.getByRole('button', { name: 'Change from Ana to another chat' }).click();
  await form.getByLabel("Render as one of the campaign's chats: find by name").fill('guest-2');
  await form.getByRole('button', { name: /^Render as guest-2/ }).click();
  expect(await missing.innerText()).toBe('{{name}} has no value for guest-2 and no fallback: the test shows it as written.');
  expect(await form.locator('tr[data-variable="name"]').innerText()).toContain('missing: no value and no fallback');
  await form.getByRole('button', { name: 'Change from guest-2 to another chat' }).click();
  await form.getByRole('button', { name: /^Render as Ana/ }).click();

  await form.getByLabel('Or its chat id').fill('operator-phone');
  await screenshots(page, 'campaign-test-send');
  await form.getByRole('button', { name: 'Send test' }).click();
  await page.getByText('Test sent to operator-phone').waitFor();
  const got = await eventually('the test at the platform', async () => (await received(suite.stack)).find((m) => m.account === 'test-send-acc'), 30_000, 200);
  expect(got).toMatchObject({ chatId: 'operator-phone', part: { text: 'Hi Ana, see you in town' } });
  const item = page.locator('li[data-run-id]').first();
  await item.locator('.pill-success').waitFor({ timeout: 30_000 });
  expect(await item.innerText()).toContain('test send');
  expect((await received(suite.stack)).filter((m) => m.account === 'test-send-acc')).toHaveLength(1);
  await page.context().close();
}, 60_000);
