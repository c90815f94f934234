import { api, sandbox, type SandboxMessage } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { API_KEY, account, campaign, chats, consoleSuite, open, runItem, runNow, runStatus, tenant } from './console-kit.js';

// The run page's Delivered, Read and Replied columns and its receipt filter, and Activity's
// delivered/read percentages, in a real browser, fed by receipts the platform posts to the API
// (POST /v1/platform/receipts with the account's key, the message ids the sandbox answered):
// 8 of 10 chats delivered, 4 read (each posted twice, reads before deliveries).

// a stack of its own: the API tells an account's receipts by its key, which every console file's accounts share
const suite = consoleSuite({ senders: 1 });

test('receipts show in the run page columns and filters, and as percentages on Activity', async () => {
  const token = await tenant(suite, 'Receipts console');
  const acc = await account(suite, token, 'rc-acc', 6000);
  const runId = await runNow(suite, token, await campaign(suite, token, { accountId: acc, name: 'Receipts campaign', targets: chats('c', 10) }));
  await eventually('the run to finish', async () => (await runStatus(suite, token, runId)) === 'success', 30_000, 200);

  const sent = (await sandbox<{ items: (SandboxMessage & { messageId: string })[] }>(suite.stack, '/sandbox/messages?account=rc-acc')).items;
  expect(sent).toHaveLength(10);
  const id = (chat: string) => sent.find((m) => m.chatId === chat)!.messageId;
  const at = (s: number) => new Date(Date.now() - 60_000 + s * 1000).toISOString();
  const delivered = chats('c', 8).map((c, i) => ({ messageId: id(c), chatId: c, status: 'delivered', at: at(i) }));
  const read = chats('c', 4).map((c, i) => ({ messageId: id(c), chatId: c, status: 'read', at: at(20 + i) }));
  for (const receipts of [read, delivered, [...read, ...delivered]]) {
    const res = await fetch(`${suite.stack.apiUrl}/v1/platform/receipts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify({ receipts }),
    });
    expect(res.status).toBe(200);
  }
  expect((await api(suite.stack, 'GET', `/v1/runs/${runId}`, token)).body.counts).toMatchObject({ sent: 10, delivered: 8, read: 4 });

  const page = await open(suite, token, `#/runs/${runId}`);
  await page.getByRole('heading', { name: /Receipts campaign/ }).waitFor();
  const rows = page.locator('table.targets tbody tr');
  await eventually('all ten chats listed', async () => (await rows.count()) === 10);
  const cell = (chat: string, column: string) =>
    page
      .locator('table.targets tbody tr', { has: page.locator(`td[data-label="Chat"]`, { hasText: new RegExp(`^${chat}$`) }) })
      .locator(`td[data-label="${column}"]`);
  for (const c of chats('c', 10)) {
    const n = Number(c.slice(2));
    expect({
      c,
      delivered: (await cell(c, 'Delivered').innerText()) !== '—',
      read: (await cell(c, 'Read').innerText()) !== '—',
      replied: await cell(c, 'Replied').innerText(),
    }).toEqual({
      c,
      delivered: n <= 8,
      read: n <= 4,
      replied: '—',
    });
  }

  // the filter lists what each choice names
  const listed = async (choice: string, want: string[]) => {
    await page.getByRole('combobox', { name: 'Receipt' }).selectOption({ label: choice });
    const expected = JSON.stringify([...want].sort());
    await eventually(
      `${choice} to list ${expected}`,
      async () => JSON.stringify((await page.locator('table.targets tbody td[data-label="Chat"]').allInnerTexts()).sort()) === expected,
    );
  };
  await listed('Delivered', chats('c', 8));
  await listed('Not delivered', ['c-9', 'c-10']);
  await listed('Read', chats('c', 4));
  await listed('Not read', chats('c', 10).slice(4));
  await listed('Replied', []);

  // Activity: the run's progress says 80 % delivered and 40 % read
  await page.evaluate(`location.hash = '#/'`);
  await runItem(page, runId).locator('.receipts').waitFor();
  expect((await runItem(page, runId).locator('.receipts').innerText()).trim()).toBe('· 80% delivered · 40% read');
  await page.context().close();
}, 90_000);
