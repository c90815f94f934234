import { api } from '../helpers/stack.js';
import { account, consoleSuite, open, tenant } from './console-kit.js';

// The Accounts page shows a cooling account's reason, end and lowered pace, and lifts the
// cooling after asking first.

const suite = consoleSuite();

test('a cooling account shows why, until when and its pace in force; Lift cooling asks, then lifts it', async () => {
  const token = await tenant(suite, 'Cooling');
  const acc = await account(suite, token, 'cool-console', 600);
  const until = new Date(Date.now() + 30 * 60_000);
  await suite.stack.db.db
    .updateTable('accounts')
    .set({ status: 'cooling', cooling_since: new Date(), cooling_until: until, cooling_reason: 'flood_waits', pace_factor: 0.5, pace_since: until })
    .where('id', '=', acc)
    .execute();

  const page = await open(suite, token, '#/accounts');
  const card = page.locator(`li[data-account-id="${acc}"]`);
  await card.locator('.pill-cooling').waitFor();
  await card.getByText(/Cooling until .+: the platform made it wait too often/).waitFor();
  await card.getByText('300/min (lowered from 600/min, recovering)').waitFor();

  await card.getByRole('button', { name: 'Lift cooling' }).click();
  // asked first: nothing changed yet
  await card.getByRole('group', { name: 'Confirm lift cooling' }).waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body.status).toBe('cooling');
  await card.getByRole('button', { name: 'Yes, lift cooling' }).click();
  await card.locator('.pill-active').waitFor();
  expect(await card.getByRole('button', { name: 'Lift cooling' }).count()).toBe(0);
  expect((await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body).toMatchObject({ status: 'active', cooling: null, effectiveMaxSendPerMinute: 300 });
  await page.context().close();
}, 90_000);

test('a WhatsApp account whose new chats WhatsApp holds says so on its card; a 463 hold is lifted after asking, a time lock shows its end', async () => {
  const token = await tenant(suite, 'New chats');
  const created = await api(suite.stack, 'POST', '/v1/accounts', token, { platform: 'whatsapp', name: 'wa-new-chats' });
  expect(created.status).toBe(201);
  const acc = created.body.id as string;
  await suite.stack.db.db.updateTable('accounts').set({ status: 'active', new_chats_refused_at: new Date() }).where('id', '=', acc).execute();

  const page = await open(suite, token, '#/accounts');
  const card = page.locator(`li[data-account-id="${acc}"]`);
  await card.getByText(/New chats held: WhatsApp refused a message to a new chat \(463/).waitFor();
  await card.getByRole('button', { name: 'Lift the hold on new chats' }).click();
  await card.getByRole('group', { name: 'Confirm lift the hold on new chats' }).waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body.newChats.held.reason).toBe('new_chats_refused');
  await card.getByRole('button', { name: 'Yes, lift the hold' }).click();
  // the line goes once the API answered the lift (nothing holds the account's new chats any more)
  await card.locator('[data-new-chats]').waitFor({ state: 'detached' });
  expect((await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body).toMatchObject({ status: 'active', newChats: null });

  // WhatsApp's time lock ends by itself: its end is shown, and nothing to lift
  const until = new Date(Date.now() + 2 * 3_600_000);
  await suite.stack.db.db.updateTable('accounts').set({ reachout_lock_until: until, reachout_lock_type: 'DEFAULT' }).where('id', '=', acc).execute();
  await page.reload();
  await card.getByText(/New chats held until .+: WhatsApp locked the account out of new chats/).waitFor();
  expect(await card.getByRole('button', { name: 'Lift the hold on new chats' }).count()).toBe(0);
  await page.context().close();
}, 90_000);
