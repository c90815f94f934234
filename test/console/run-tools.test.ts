import { downloadedText, screenshots } from '../helpers/browser.js';
import { RUN_CSV_COLUMNS } from '../helpers/run-csv-columns.js';
import { FakeTelegramBotApi } from '../helpers/fake-telegram-bot-api.js';
import { takeExpectedBrowserError } from '../helpers/page-checks.js';
import { openEventStream, type EventStream } from '../helpers/sse-client.js';
import { api } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { account, campaign, chats, consoleSuite, open, runItem, runNow, runStatus, tenant } from './console-kit.js';

// What the console does for an operator beside reading: the CSV of a run's chats, a browser
// notification when a run pauses, and a new bot token for a disconnected Telegram account.
// Telegram is a fake of the Bot API (a real HTTP server) that the sender is pointed at.

let telegram: FakeTelegramBotApi;
const streams: EventStream[] = [];
beforeAll(async () => {
  telegram = await FakeTelegramBotApi.start();
});
const suite = consoleSuite(() => ({ senders: 1, senderEnv: { TELEGRAM_API_URL: telegram.url } }));
afterAll(async () => {
  for (const s of streams) s.close();
  await telegram?.close();
});

/** RFC 4180: quoted cells may hold commas, quotes (doubled) and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(cell), (cell = '');
    else if (ch === '\r' && text[i + 1] === '\n') row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    else cell += ch;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

test('Export CSV downloads every chat of the run as the API lists them; the page and the file name each chat by its title', async () => {
  const token = await tenant(suite, 'Csv');
  // the platform's directory, set before the account exists: an http account syncs by itself when created
  const directory = await fetch(`${suite.stack.sandboxUrl}/sandbox/accounts/csv-acc/directory`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      chats: [
        { chatId: 'c-1', title: 'Café Central', kind: 'group', memberCount: 9, canSend: true },
        { chatId: 'c-3', title: 'Chess Club', kind: 'group', memberCount: 4, canSend: true },
      ],
    }),
  });
  expect(directory.status).toBe(200);
  const acc = await account(suite, token, 'csv-acc', 6000);
  await eventually('the directory synced', async () => (await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body.directory?.size === 2, 30_000, 200);
  // one chat refused by the platform, so the file holds an error code and message too
  const put = await fetch(`${suite.stack.sandboxUrl}/sandbox/chats/csv-acc/c-3`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: 'message_invalid' }),
  });
  expect(put.ok).toBe(true);
  // a group's chat id is a negative number: exported as it is, not as text
  const runId = await runNow(
    suite,
    token,
    // c-1 and c-3 titled by the directory, c-2 by its own name
    await campaign(suite, token, {
      accountId: acc,
      name: 'Csv campaign',
      targets: ['c-1', { chatId: 'c-2', vars: { name: 'Ann' } }, ...chats('c', 6).slice(2), '-1001234567890'],
    }),
  );
  await eventually('the run to finish', async () => (await runStatus(suite, token, runId)) === 'partial', 30_000, 200);
  const page = await open(suite, token, `#/runs/${runId}`, { acceptDownloads: true });
  await page.getByRole('heading', { name: /Csv campaign/ }).waitFor();
  // each chat by its title, its id beside it; a chat with neither title nor name by its id
  const row = (chat: string) => page.locator('table.targets tbody td[data-label="Chat"]').filter({ hasText: chat });
  expect(await row('c-1').innerText()).toBe('Café Central c-1');
  expect(await row('c-2').innerText()).toBe('Ann c-2');
  expect(await row('c-3').innerText()).toBe('Chess Club c-3'); // the failed one, beside its error
  expect(await row('c-4').innerText()).toBe('c-4');
  await screenshots(page, 'run-chats');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  expect(download.suggestedFilename()).toBe(`run-${runId}.csv`);
  const saved = await downloadedText(download);
  expect(saved.startsWith('\ufeffchatId,')).toBe(true); // the UTF-8 BOM spreadsheets read it by
  const [head, ...rows] = parseCsv(saved.slice(1));
  expect(head).toEqual(RUN_CSV_COLUMNS);
  const targets = (await api(suite.stack, 'GET', `/v1/runs/${runId}/targets?limit=500`, token)).body.items as any[];
  const n = (v: number | null) => (v === null ? '' : String(v));
  const fromApi = targets.map((t) => [
    t.chatId,
    t.status,
    String(t.attempts),
    t.nextAttemptAt ?? '',
    t.sentAt ?? '',
    t.waiting?.reason ?? '',
    t.waiting?.detail ?? '',
    t.error?.code ?? '',
    t.error?.message ?? '',
    t.deliveredAt ?? '',
    t.readAt ?? '',
    t.repliedAt ?? '',
    n(t.deliveredTo),
    n(t.readBy),
    n(t.memberCount),
    t.title ?? '',
  ]);
  expect(rows).toEqual(fromApi);
  expect(rows).toHaveLength(7);
  expect(rows.filter((r) => r[1] === 'failed').map((r) => r[0])).toEqual(['c-3']);
  expect(rows.find((r) => r[0] === 'c-3')![7]).not.toBe('');
  // the title last: the directory's, else the chat's own name, else empty
  expect(rows.map((r) => [r[0], r[15]])).toEqual([
    ['-1001234567890', ''],
    ['c-1', 'Café Central'],
    ['c-2', 'Ann'],
    ['c-3', 'Chess Club'],
    ['c-4', ''],
    ['c-5', ''],
    ['c-6', ''],
  ]);

  // The network drops the export's requests (the browser aborts them: a double of a lost
  // connection, not of the API): the page says so, keeps the table, and the next try works.
  const exportPages = (url: URL) => url.pathname === `/v1/runs/${runId}/targets` && url.searchParams.get('limit') === '500';
  await page.route(exportPages, (route) => route.abort('connectionreset'));
  await page.getByRole('button', { name: 'Export CSV' }).click();
  await page.getByRole('alert').waitFor();
  // the browser logs the dropped request: the one error this test causes
  await takeExpectedBrowserError(/ERR_CONNECTION_RESET .*\/targets\?limit=500/);
  expect(await page.getByRole('button', { name: 'Export CSV' }).isEnabled()).toBe(true);
  expect(await page.locator('table.targets tbody tr').count()).toBe(7);
  await page.unroute(exportPages);
  const [again] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  expect(parseCsv(await downloadedText(again))).toHaveLength(8);
  expect(await page.getByRole('alert').count()).toBe(0);
  await page.context().close();
}, 60_000);

// A hook on window.Notification, installed before the console's script runs: it records what
// the page shows, then lets the browser show it.
const NOTIFICATION_HOOK = `
  window.__notifications = [];
  const Real = window.Notification;
  class Recorded extends Real {
    constructor(title, options) {
      window.__notifications.push({ title, body: options && options.body });
      super(title, options);
    }
  }
  Object.defineProperty(Recorded, 'permission', { get: () => Real.permission });
  Recorded.requestPermission = (...args) => Real.requestPermission(...args);
  window.Notification = Recorded;
`;

test('with notifications granted, a run that pauses shows a notification with the title and body of its event', async () => {
  const token = await tenant(suite, 'Notify');
  const acc = await account(suite, token, 'notify-acc', 20);
  const events = await openEventStream(suite.stack.apiUrl, token);
  streams.push(events);
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ['notifications'] });
  await context.addInitScript(NOTIFICATION_HOOK);
  const page = await context.newPage();
  await page.goto(`${suite.stack.apiUrl}/#token=${encodeURIComponent(token)}`);
  await page.getByRole('heading', { name: 'Activity' }).waitFor();
  expect(await page.evaluate('Notification.permission')).toBe('granted');
  // granted: the page does not offer to turn them on
  expect(await page.getByRole('button', { name: 'Turn on notifications' }).count()).toBe(0);

  const runId = await runNow(suite, token, await campaign(suite, token, { accountId: acc, name: 'Notified campaign', targets: chats('n', 30) }));
  await runItem(page, runId).locator('.pill-running').waitFor({ timeout: 30_000 });
  await runItem(page, runId).getByRole('button', { name: 'Pause' }).click();
  await runItem(page, runId).locator('.pill-paused').waitFor({ timeout: 30_000 });
  const paused = await eventually(
    'the paused event',
    async () => events.events.find((e) => e.event === 'run' && e.data.runId === runId && e.data.status === 'paused') ?? null,
    10_000,
    100,
  );
  const shown = await eventually(
    'the notification',
    async () => ((await page.evaluate('window.__notifications')) as { title: string; body: string }[]).find((n) => n.title === paused.data.title) ?? null,
    10_000,
    100,
  );
  expect(shown).toEqual({ title: paused.data.title, body: paused.data.body });
  expect(paused.data.title).toBe('Reminder paused');
  expect(paused.data.body).not.toBe('');
  // a notification is instead of the in-page toast
  expect(await page.locator('.toast').count()).toBe(0);
  await context.close();
  expect((await api(suite.stack, 'POST', `/v1/runs/${runId}/cancel`, token)).status).toBe(202);
}, 90_000);

test('a disconnected Telegram account takes a new bot token in the console and sends with it', async () => {
  const token = await tenant(suite, 'Telegram');
  const oldBot = '7000001:AAold-token-000000000000000';
  const newBot = '7000001:BBnew-token-111111111111111';
  telegram.addBot(oldBot);
  const created = await api(suite.stack, 'POST', '/v1/accounts', token, {
    platform: 'telegram',
    name: 'Shop bot',
    credentials: { botToken: oldBot },
    maxSendPerMinute: 6000,
  });
  expect(created.status).toBe(201);
  const acc = created.body.id as string;
  telegram.revoke(oldBot); // BotFather /revoke: the old token is refused from now on
  await runNow(suite, token, await campaign(suite, token, { accountId: acc, name: 'Telegram campaign', targets: ['1001', '1002'] }));
  await eventually(
    'the account to disconnect',
    async () => (await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body.status === 'disconnected',
    30_000,
    200,
  );

  const page = await open(suite, token, '#/accounts');
  const card = page.locator(`li[data-account-id="${acc}"]`);
  await card.locator('.pill-disconnected').waitFor();
  await card.getByText('The bot token was refused').waitFor();
  await card.getByLabel('New bot token').fill('not-a-token');
  await card.getByRole('button', { name: 'Save bot token' }).click();
  await card.locator('.error', { hasText: 'expected a Telegram bot token' }).waitFor();
  telegram.addBot(newBot);
  await card.getByLabel('New bot token').fill(newBot);
  await card.getByRole('button', { name: 'Save bot token' }).click();
  await card.locator('.pill-active').waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body.status).toBe('active');

  const again = await runNow(suite, token, await campaign(suite, token, { accountId: acc, name: 'After the fix', targets: ['2001', '2002'] }));
  await eventually('the run after the fix to succeed', async () => (await runStatus(suite, token, again)) === 'success', 30_000, 200);
  expect(
    telegram
      .messages({ token: newBot })
      .map((m) => m.chatId)
      .filter((c) => c.startsWith('200'))
      .sort(),
  ).toEqual(['2001', '2002']);
  await page.context().close();
}, 90_000);
