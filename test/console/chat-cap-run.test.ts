import { api } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { API_KEY, campaign, consoleSuite, open, runNow, tenant } from './console-kit.js';

// A run held by the per-chat cap, in the console as the others: its reason and sentence on the
// run's page, and each held chat's hold in its row.

const suite = consoleSuite();

test('a second campaign to chats at their cap: the run page says chat cap, and each chat when it is free', async () => {
  const token = await tenant(suite, 'Chat cap run');
  const created = await api(suite.stack, 'POST', '/v1/accounts', token, {
    platform: 'http',
    credentials: { apiKey: API_KEY },
    name: 'Capped line',
    externalId: 'chat-cap-run',
    maxSendPerMinute: 600,
    chatCap: { count: 1, per: 'day' },
  });
  expect(created.status).toBe(201);
  const targets = ['cc-1', 'cc-2', 'cc-3'];
  const first = await runNow(suite, token, await campaign(suite, token, { accountId: created.body.id, name: 'First', targets }));
  await eventually('the first run to finish', async () => (await api(suite.stack, 'GET', `/v1/runs/${first}`, token)).body.status === 'success', 30_000, 100);
  const second = await runNow(suite, token, await campaign(suite, token, { accountId: created.body.id, name: 'Second', targets }));
  await eventually(
    'the second run to wait for the cap',
    async () => (await api(suite.stack, 'GET', `/v1/runs/${second}`, token)).body.waiting?.reason === 'chat_cap',
    30_000,
    100,
  );

  const page = await open(suite, token, `#/runs/${second}`);
  const waiting = page.locator('p.waiting');
  await waiting.getByText('chat cap').waitFor();
  expect(await waiting.innerText()).toContain('3 chats held until');
  expect(await waiting.innerText()).toContain("by the account's cap on messages to one chat (chatCap)");
  const rows = page.locator('td[data-label="Waiting"]');
  await rows.first().waitFor();
  expect(await rows.allInnerTexts()).toEqual(targets.map(() => expect.stringMatching(/^Held until .* by the account's cap on messages to one chat/)));
  await page.context().close();
}, 90_000);
