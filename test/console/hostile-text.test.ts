import { parse } from 'csv-parse/sync';
import type { Locator, Page } from 'playwright-core';
import { downloadedText } from '../helpers/browser.js';
import { api } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { account, campaign, consoleSuite, open, runNow, tenant } from './console-kit.js';

// Text from outside stays text: chat titles and ids from the platform, CSV values from whoever
// wrote the file. Hostile ones (script tags, a right-to-left override, formula starts after a
// line break, names as long as each field allows) run nothing, never reorder the console's own
// words beside them, never widen the page, and an exported CSV parses back and uploads back
// unchanged.

const suite = consoleSuite();

const RLO = '\u202E';
const SCRIPT = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
// the longest each field takes: a title 200 characters, a chat id 256, a variable's value 1,000
const LONG_TITLE = 'W'.repeat(200);
const LONG_VALUE = 'W'.repeat(1000);
const FORMULA_AFTER_BREAK = "Ann\n=cmd|' /C calc'!A0";

// The page-side checks, as source (the tests are typed without the DOM), installed in each page.
const IN_PAGE = String.raw`
  // Every text node holding a bidi embedding or override (U+202A-U+202E) outside an isolate of its
  // own: its nearest isolating element (computed unicode-bidi; blocks isolate too) holds more than
  // that node's text, or there is none. FSI...PDI isolates inside a string count as isolating.
  window.__unisolated = () => {
    const bad = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent;
      if (!/[‪-‮]/.test(text.replace(/⁨[^⁩]*⁩/g, ''))) continue;
      let el = n.parentElement;
      while (el && !['isolate', 'isolate-override', 'plaintext'].includes(getComputedStyle(el).unicodeBidi)) el = el.parentElement;
      if (!el || el.textContent !== text) bad.push(JSON.stringify(text.slice(0, 30)) + ' in <' + n.parentElement.tagName + '>');
    }
    return bad;
  };
  // Whether, as rendered, every box of the outside text ends left of the console's own word after
  // it, and that word left of the next (read left to right on one line).
  window.__readsInOrder = (root, [outside, word, next]) => {
    const rects = (text, whole) => {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const i = whole ? (n.textContent === text ? 0 : -1) : n.textContent.indexOf(text);
        if (i < 0) continue;
        const range = document.createRange();
        range.setStart(n, i);
        range.setEnd(n, i + text.length);
        return [...range.getClientRects()];
      }
      throw new Error('no text ' + JSON.stringify(text.slice(0, 30)));
    };
    const end = Math.max(...rects(outside, true).map((r) => r.right));
    const at = rects(word, false)[0].left;
    return at >= end - 0.5 && (next === undefined || rects(next, false)[0].left > at);
  };
`;

/** Watches a page for anything the hostile text could run: a dialog, or the payload's global. */
async function guard(page: Page): Promise<() => Promise<void>> {
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.addInitScript(IN_PAGE);
  await page.evaluate(IN_PAGE);
  return async () => {
    expect(dialogs).toEqual([]);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
  };
}

const unisolated = (page: Page) => page.evaluate('window.__unisolated()');

/** How far the page is wider than the viewport (0 when it is not). */
const overflow = (page: Page) => page.evaluate('Math.max(0, document.documentElement.scrollWidth - window.innerWidth)');

const readsInOrder = (at: Locator, outside: string, word: string, next?: string) =>
  at.evaluate(
    (root, args) => (globalThis as unknown as { __readsInOrder: (r: unknown, a: unknown) => boolean }).__readsInOrder(root, args),
    [outside, word, next],
  );

async function judge(page: Page, where: string, safe: () => Promise<void>): Promise<void> {
  await safe();
  expect({ where, unisolated: await unisolated(page), overflow: await overflow(page) }).toEqual({ where, unisolated: [], overflow: 0 });
}

test('hostile chat titles and ids: the directory, the chat picker, the campaign page and the run stay in order and in width', async () => {
  const token = await tenant(suite, 'Hostile titles');
  const rloId = `h-${RLO}olleh`;
  const chats = [
    { chatId: rloId, title: `${RLO}Café evil`, kind: 'group', memberCount: 5, canSend: true },
    { chatId: 'h-script', title: SCRIPT, kind: 'group', memberCount: 6, canSend: true },
    { chatId: 'h-long', title: LONG_TITLE, kind: 'group', memberCount: 7, canSend: true },
  ];
  const put = await fetch(`${suite.stack.sandboxUrl}/sandbox/accounts/hostile-acc/directory`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chats }),
  });
  expect(put.status).toBe(200);
  const acc = await account(suite, token, 'hostile-acc', 6000, 'Hostile account');
  expect((await api(suite.stack, 'POST', `/v1/accounts/${acc}/chats/sync`, token)).status).toBe(202);
  await eventually('the directory synced', async () => (await api(suite.stack, 'GET', `/v1/accounts/${acc}`, token)).body.directory?.size === 3, 30_000, 200);

  const page = await open(suite, token, '#/accounts');
  const safe = await guard(page);
  await page.getByRole('button', { name: 'Show chats of Hostile account' }).click();
  await page.locator(`tr[data-chat-id="h-long"]`).waitFor();
  await judge(page, 'directory', safe);

  // the chat picker: the row's own words after the title read left to right
  await page.evaluate(`location.hash = '#/campaigns/new'`);
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await page.getByLabel('Account', { exact: true }).selectOption(acc);
  await page.getByLabel('Find chats by name').fill('h-');
  const results = page.getByRole('list', { name: 'Chats matching h-' });
  await results.locator('li').nth(2).waitFor();
  const rloRow = results.locator(`li[data-chat-id="${rloId}"]`);
  expect(await readsInOrder(rloRow, `${RLO}Café evil`, 'group', 'members')).toBe(true);
  await judge(page, 'chat picker', safe);
  for (const c of chats) await results.locator(`li[data-chat-id="${c.chatId}"] button`).click();
  const picked = page.getByRole('list', { name: 'Picked chats' });
  await picked.locator('li').nth(2).waitFor();
  await judge(page, 'picked chats', safe);

  // the campaign page's chat variables, then its run's chats
  const id = await campaign(suite, token, {
    accountId: acc,
    name: 'Hostile campaign',
    messages: [{ type: 'text', text: 'Hello {{name}}' }],
    targets: [
      { chatId: rloId, vars: { name: `${RLO}evil name`, city: 'Oslo' } },
      { chatId: 'h-script', vars: { name: SCRIPT, city: 'Oslo' } },
      { chatId: 'h-long', vars: { name: LONG_VALUE, city: FORMULA_AFTER_BREAK } },
    ],
  });
  await page.evaluate(`location.hash = '#/campaigns/${id}'`);
  await page.getByRole('heading', { name: 'Hostile campaign', exact: true }).waitFor();
  const varsRow = page.locator('ul.chat-vars li').filter({ hasText: 'evil name' });
  // the chat id, then the console's `:` and the variable's name, then its value
  expect(await readsInOrder(varsRow, rloId, 'city', 'name')).toBe(true);
  await judge(page, 'campaign page', safe);

  const runId = await runNow(suite, token, id);
  await page.evaluate(`location.hash = '#/runs/${runId}'`);
  await page.locator('table.targets tbody tr').nth(2).waitFor();
  await judge(page, 'run page', safe);
  await page.setViewportSize({ width: 390, height: 900 });
  await judge(page, 'run page at 390 px', safe);
  await page.context().close();
}, 90_000);

test('hostile CSV values: the audience shows them as text, its export escapes formulas, keeps its BOM, and uploads back unchanged', async () => {
  const token = await tenant(suite, 'Hostile CSV');
  const members = [
    { chatId: `a-${RLO}1`, vars: { name: `${RLO}evil name`, note: SCRIPT } },
    { chatId: '=1+1', vars: { name: FORMULA_AFTER_BREAK, note: "'" } },
    { chatId: "'=2", vars: { name: "''=x", note: '\r+1' } },
    { chatId: "'plain", vars: { name: '\t@SUM(A1)', note: '-1+1' } },
    { chatId: '-1001234567890', vars: { name: LONG_VALUE, note: '"quoted", and ;' } },
    { chatId: `long-${'W'.repeat(251)}`, vars: null },
  ].sort((a, b) => (a.chatId < b.chatId ? -1 : 1));
  const created = await api(suite.stack, 'POST', '/v1/audiences', token, {
    name: `${RLO}Hostile <b>list</b>`,
    members: members.map((m) => (m.vars ? m : { chatId: m.chatId })),
  });
  expect([created.status, created.body.error?.details]).toEqual([201, undefined]);
  const page = await open(suite, token, `#/audiences/${created.body.id}`, { acceptDownloads: true });
  const safe = await guard(page);
  await page
    .locator('.members tbody tr')
    .nth(members.length - 1)
    .waitFor();
  await judge(page, 'audience page', safe);

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  const text = await downloadedText(download);
  expect(text.startsWith('\ufeffchatId,name,note\r\n')).toBe(true);
  // read as a spreadsheet reads it: a CR or LF outside quotes ends the row, whichever comes
  const cells: string[][] = parse(text, { bom: true, record_delimiter: ['\r\n', '\n', '\r'] });
  // no cell a spreadsheet would run: each begins with something other than = + - @ tab CR
  expect(cells.flat().filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([]);
  const unescaped = (c: string) => (/^'[=+\-@\t\r']/.test(c) ? c.slice(1) : c);
  const parsed = cells.slice(1).map(([chatId, name, note]) => {
    const vars: Record<string, string> = {};
    if (name) vars['name'] = unescaped(name);
    if (note) vars['note'] = unescaped(note);
    return { chatId: unescaped(chatId!), vars: Object.keys(vars).length ? vars : null };
  });
  expect(parsed).toEqual(members);

  // the file as saved, uploaded back into a new audience through the console
  await page.evaluate(`location.hash = '#/audiences'`);
  await page.getByLabel('New audience name').fill('Back again');
  await page
    .getByLabel('CSV file (a chatId column, one column per variable)')
    .setInputFiles({ name: 'back.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });
  const preview = page.getByRole('region', { name: 'Import preview' });
  await preview.waitFor();
  await judge(page, 'import preview', safe);
  await preview.getByRole('button', { name: `Import ${members.length} chats` }).click();
  await page.getByText(/Imported \W?back\.csv\W? into/).waitFor();
  const back = (await api(suite.stack, 'GET', '/v1/audiences', token)).body.items.find((a: { name: string }) => a.name === 'Back again');
  const listed = await api(suite.stack, 'GET', `/v1/audiences/${back.id}/members?limit=500`, token);
  expect([...listed.body.items].sort((a, b) => (a.chatId < b.chatId ? -1 : 1))).toEqual(members);
  await judge(page, 'audiences page', safe);
  await page.context().close();
}, 90_000);
