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
