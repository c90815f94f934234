import { received } from '../helpers/platform-record.js';
import { api } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { account, campaign, consoleSuite, open, tenant } from './console-kit.js';

// Send a test from the campaign page: the message rendered with the variables of a member of the
// campaign's audience reaches the one chat typed, shows in the run history as a test send, and
// a chat that is none of the campaign's is named beside the "Variables of" field.

const suite = consoleSuite();

test('Send a test renders the variables of the chosen chat, goes to the chat given, and is listed as a test send', async () => {
  const token = await tenant(suite, 'Test send');
  const acc = await account(suite, token, 'test-send-acc', 6000, 'Test send account');
  const audience = await api(suite.stack, 'POST', '/v1/audiences', token, { name: 'Guests', members: [{ chatId: 'guest-1', vars: { name: 'Ana' } }] });
  expect(audience.status).toBe(201);
  const id = await campaign(suite, token, {
    accountId: acc,
    name: 'Greeting',
    targets: [],
    audienceIds: [audience.body.id],
    messages: [{ type: 'text', text: 'Hi {{name}}' }],
  });
  const page = await open(suite, token, `#/campaigns/${id}`);
  await page.getByRole('heading', { name: 'Greeting' }).waitFor();

  await page.getByLabel('Or its chat id').fill('operator-phone');
  await page.getByLabel('Variables of (chat id)').fill('nobody');
  await page.getByRole('button', { name: 'Send test' }).click();
  await page.locator('#testAs-error').waitFor();
  expect(await page.getByLabel('Variables of (chat id)').getAttribute('aria-invalid')).toBe('true');

  await page.getByLabel('Variables of (chat id)').fill('guest-1');
  await page.getByRole('button', { name: 'Send test' }).click();
  await page.getByText('Test sent to operator-phone').waitFor();
  const got = await eventually('the test at the platform', async () => (await received(suite.stack)).find((m) => m.account === 'test-send-acc'), 30_000, 200);
  expect(got).toMatchObject({ chatId: 'operator-phone', part: { text: 'Hi Ana' } });
  const item = page.locator('li[data-run-id]').first();
  await item.locator('.pill-success').waitFor({ timeout: 30_000 });
  expect(await item.innerText()).toContain('test send');
  expect((await received(suite.stack)).filter((m) => m.account === 'test-send-acc')).toHaveLength(1);
  await page.context().close();
}, 60_000);
