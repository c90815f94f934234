import { createHash, randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { screenshots } from '../helpers/browser.js';
import { received } from '../helpers/platform-record.js';
import { api, sandbox } from '../helpers/stack.js';
import { account, campaign, consoleSuite, open, runItem, tenant } from './console-kit.js';

// The campaign form in a real Chromium against the real stack: the API's field errors beside the
// fields, PATCH with only what changed, deactivation that asks first, and a media file uploaded
// in the form that the platform (the sandbox) then receives.

const suite = consoleSuite();

const field = (page: Page, label: string) => page.getByLabel(label, { exact: true });
const focusedId = (page: Page) => page.evaluate('document.activeElement && document.activeElement.id');
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

test("a bad field's error shows beside it and takes focus, nothing typed is lost; fixed, the campaign is created and shown", async () => {
  const token = await tenant(suite, 'Form');
  const acc = await account(suite, token, 'form-acc', 6000, 'Form account');
  const page = await open(suite, token, '#/campaigns');
  await page.getByRole('link', { name: 'New campaign' }).click();
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();

  const typedChats = 'k-1\nk-2\n\nk-3';
  await field(page, 'Name').fill('Morning reminder');
  await field(page, 'Account').selectOption(acc);
  await field(page, 'Chats (one chat id a line)').fill(typedChats);
  await field(page, 'Text').fill('Good morning');
  await field(page, 'Repeats').selectOption('interval');
  await field(page, 'Every').fill('5');
  await field(page, 'Unit').selectOption('minutes');
  await field(page, 'Timezone').fill('Mars/Olympus_Mons');
  await field(page, 'Window opens (HH:MM)').fill('06:00');
  await field(page, 'Window closes (HH:MM)').fill('18:00');
  await field(page, 'Active: the schedule makes runs').uncheck();
  await page.getByRole('button', { name: 'Create campaign' }).click();

  const note = page.locator('#timezone-error');
  await note.waitFor();
  expect(await note.innerText()).toContain('unknown IANA timezone "Mars/Olympus_Mons"');
  expect(await field(page, 'Timezone').getAttribute('aria-invalid')).toBe('true');
  expect(await field(page, 'Timezone').getAttribute('aria-describedby')).toBe('timezone-error');
  expect(await focusedId(page)).toBe('timezone');
  // only the timezone is marked
  expect(await page.locator('[aria-invalid="true"]').count()).toBe(1);
  expect(await field(page, 'Name').inputValue()).toBe('Morning reminder');
  expect(await field(page, 'Chats (one chat id a line)').inputValue()).toBe(typedChats);
  expect(await field(page, 'Window closes (HH:MM)').inputValue()).toBe('18:00');
  expect((await api(suite.stack, 'GET', '/v1/campaigns', token)).body.items).toEqual([]);
  await screenshots(page, 'campaign-form');

  // every input has a label; at 390 px nothing is wider than the screen
  expect(
    await page.evaluate(
      `[...document.querySelectorAll('form.campaign-form :is(input, select, textarea)')].filter((el) => el.labels.length === 0).map((el) => el.id)`,
    ),
  ).toEqual([]);
  await page.setViewportSize({ width: 390, height: 900 });
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 900 });

  // fixed and sent from the keyboard: Enter in the field submits the form
  await field(page, 'Timezone').fill('Asia/Kuala_Lumpur');
  await field(page, 'Timezone').press('Enter');
  await page.getByRole('heading', { name: 'Morning reminder' }).waitFor();
  await page.getByText('every 5 minutes, 06:00–18:00 Asia/Kuala_Lumpur').waitFor();
  const [saved] = (await api(suite.stack, 'GET', '/v1/campaigns', token)).body.items;
  expect(saved).toMatchObject({
    name: 'Morning reminder',
    accountId: acc,
    targets: ['k-1', 'k-2', 'k-3'],
    messages: [{ type: 'text', text: 'Good morning' }],
    schedule: { type: 'interval', everySeconds: 300 },
    timezone: 'Asia/Kuala_Lumpur',
    deliveryWindow: { start: '06:00', end: '18:00' },
    active: false,
    autoResume: false,
  });
  expect(page.url()).toBe(`${suite.stack.apiUrl}/#/campaigns/${saved.id}`);
  await page.context().close();
}, 60_000);

test('edit sends only the changed fields (its errors beside them too); deactivate asks first and keeps the campaign', async () => {
  const token = await tenant(suite, 'Edit');
  const acc = await account(suite, token, 'edit-acc', 6000, 'Edit account');
  const at = `${tomorrow()}T09:00:00.000Z`;
  const id = await campaign(suite, token, { accountId: acc, name: 'Weekly digest', targets: ['e-1', 'e-2'], schedule: { type: 'once', at }, active: true });
  const page = await open(suite, token, `#/campaigns/${id}`);
  await page.getByRole('heading', { name: 'Weekly digest' }).waitFor();
  const patches: unknown[] = [];
  page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.postDataJSON()));
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.getByRole('heading', { name: 'Edit Weekly digest' }).waitFor();
  expect(await field(page, "At (in the campaign's timezone)").inputValue()).toBe(`${tomorrow()}T09:00`);

  await field(page, 'Name').fill('Daily digest');
  await field(page, 'Window closes (HH:MM)').fill('25:00');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#windowEnd-error').waitFor();
  expect(await focusedId(page)).toBe('windowEnd');
  expect(await field(page, 'Name').inputValue()).toBe('Daily digest');

  await field(page, 'Window closes (HH:MM)').fill('20:00');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('heading', { name: 'Daily digest' }).waitFor();
  // the campaign page lists its next runs as the API works them out: the one run, tomorrow 09:00 UTC
  const next = (await api(suite.stack, 'GET', `/v1/campaigns/${id}/occurrences?limit=5`, token)).body.items;
  expect(next).toEqual([expect.objectContaining({ scheduledAt: at })]);
  await page.locator('ol.occurrences li').first().waitFor();
  expect(await page.locator('ol.occurrences li').count()).toBe(1);
  expect(patches).toEqual([
    { name: 'Daily digest', deliveryWindow: { start: '00:00', end: '25:00' } },
    { name: 'Daily digest', deliveryWindow: { start: '00:00', end: '20:00' } },
  ]);
  const after = (await api(suite.stack, 'GET', `/v1/campaigns/${id}`, token)).body;
  expect(after).toMatchObject({
    name: 'Daily digest',
    deliveryWindow: { start: '00:00', end: '20:00' },
    schedule: { type: 'once', at },
    targets: ['e-1', 'e-2'],
    active: true,
  });

  await page.getByRole('button', { name: 'Deactivate' }).click();
  await page.getByText('Deactivate it? The schedule stops making runs').waitFor();
  expect((await api(suite.stack, 'GET', `/v1/campaigns/${id}`, token)).body.active).toBe(true);
  await page.getByRole('button', { name: 'Yes, deactivate' }).click();
  await page.getByText('Campaign deactivated.').waitFor();
  const off = await api(suite.stack, 'GET', `/v1/campaigns/${id}`, token);
  expect(off).toMatchObject({ status: 200, body: { active: false } });
  await page.getByRole('button', { name: 'Activate', exact: true }).waitFor();
  expect(await page.locator('dl.facts').innerText()).toContain('Inactive');
  await page.context().close();
}, 60_000);

test('a file uploaded in the form is the media the platform receives when the campaign runs', async () => {
  const token = await tenant(suite, 'Media');
  await account(suite, token, 'media-acc', 6000, 'Media account');
  const page = await open(suite, token, '#/campaigns/new');
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  const file = randomBytes(3000);
  await field(page, 'Name').fill('Poster drop');
  await field(page, 'Account').selectOption({ label: 'Media account (http, active)' });
  await field(page, 'Chats (one chat id a line)').fill('p-1\np-2');
  await field(page, 'Text').fill('New poster');
  await page.getByRole('button', { name: 'Add media part' }).click();
  const part2 = page.getByRole('group', { name: 'Part 2' });
  // a file over the API's limit (GET /v1/me) is refused beside the field, and none of it is sent
  const uploads: string[] = [];
  page.on('request', (r) => (r.method() === 'POST' && r.url().includes('/v1/media') ? uploads.push(r.url()) : undefined));
  const max = (await api(suite.stack, 'GET', '/v1/me', token)).body.limits.mediaMaxBytes as number;
  await part2.getByLabel('Or upload a new file').setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: Buffer.alloc(max + 1024 * 1024) });
  const over = `huge.png is ${((max + 1024 * 1024) / 1024 / 1024).toFixed(1)} MB: a file may be at most ${(max / 1024 / 1024).toFixed(1)} MB. Choose a smaller one.`;
  await part2.getByText(over).waitFor();
  expect(uploads).toEqual([]);
  await part2.getByLabel('Or upload a new file').setInputFiles({ name: 'poster.png', mimeType: 'image/png', buffer: file });
  await part2.getByText('Uploaded poster.png (image/png, 2.9 KB).').waitFor();
  const mediaId = await part2.getByLabel('Media', { exact: true }).inputValue();
  expect(mediaId).toMatch(/^[0-9a-f-]{36}$/);
  await part2.getByLabel('Caption (optional)').fill('Poster caption');
  await field(page, 'Repeats').selectOption('once');
  await field(page, "At (in the campaign's timezone)").fill(`${tomorrow()}T09:00`);
  await field(page, 'Timezone').fill('UTC');
  await field(page, 'Active: the schedule makes runs').uncheck();
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('heading', { name: 'Poster drop' }).waitFor();

  await page.getByRole('button', { name: 'Run now' }).click();
  await page.locator('li[data-run-id] .pill-success').waitFor({ timeout: 30_000 });
  const runId = await page.locator('li[data-run-id]').first().getAttribute('data-run-id');
  await runItem(page, runId!).waitFor();
  const media = (await received(suite.stack)).filter((m) => m.account === 'media-acc' && m.part.type === 'media');
  expect(media.map((m) => m.chatId).sort()).toEqual(['p-1', 'p-2']);
  for (const m of media) {
    expect(m.part.caption).toBe('Poster caption');
    const stored = await sandbox(suite.stack, `/sandbox/media/${m.part.mediaRef}`);
    expect(stored).toMatchObject({ sha256: createHash('sha256').update(file).digest('hex'), contentType: 'image/png', size: file.length });
  }
  const texts = (await received(suite.stack)).filter((m) => m.account === 'media-acc' && m.part.type === 'text');
  expect(texts.map((m) => m.part.text)).toEqual(['New poster', 'New poster']);
  await page.context().close();
}, 90_000);

test("Preview shows the next runs, one run's length and whether it fits the window, as the API answers; its errors go beside the fields", async () => {
  const token = await tenant(suite, 'Preview');
  const acc = await account(suite, token, 'preview-acc', 30, 'Preview account');
  const page = await open(suite, token, '#/campaigns/new');
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await field(page, 'Name').fill('Evening news');
  await field(page, 'Account').selectOption(acc);
  await field(page, 'Chats (one chat id a line)').fill(Array.from({ length: 40 }, (_, i) => `v-${i}`).join('\n'));
  await field(page, 'Text').fill('News');
  await field(page, 'Repeats').selectOption('cron');
  await field(page, 'Cron expression (five fields: minute hour day month weekday)').fill('0 9 * *');
  await field(page, 'Timezone').fill('Asia/Kuala_Lumpur');
  await field(page, 'Window opens (HH:MM)').fill('09:00');
  await field(page, 'Window closes (HH:MM)').fill('09:01');
  // a new campaign starts inactive, which has no runs ahead: active, it has
  await field(page, 'Active: the schedule makes runs').check();
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.locator('#expression-error').waitFor();
  expect(await focusedId(page)).toBe('expression');

  await field(page, 'Cron expression (five fields: minute hour day month weekday)').fill('0 9 * * *');
  const previews: unknown[] = [];
  page.on('request', (r) => r.url().endsWith('/v1/campaigns/preview') && previews.push(r.postDataJSON()));
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByRole('heading', { name: 'Preview' }).waitFor();
  // the API's own answer to the very body the page sent
  const answer = (await api(suite.stack, 'POST', '/v1/campaigns/preview', token, previews[0])).body;
  expect(answer.run.fitsWindow).toBe(false); // 40 chats at 30/min do not fit one minute
  expect(await page.locator('.preview-detail').innerText()).toBe(answer.run.detail);
  expect(await page.locator('.preview .pill').innerText()).toBe('Does not fit the window');
  expect(await page.locator('.preview ol.occurrences li').count()).toBe(answer.occurrences.length);
  expect(answer.occurrences.length).toBe(10);
  // read on the campaign's clock (the browser's is UTC): 09:00 in Kuala Lumpur
  expect(await page.locator('.preview ol.occurrences li').first().innerText()).toMatch(/^\w{3} \d{1,2} \w{3} 09:00 /);
  await screenshots(page, 'campaign-preview');
  // a change retires the preview; nothing was saved
  await field(page, 'Window closes (HH:MM)').fill('18:00');
  await page.getByRole('heading', { name: 'Preview' }).waitFor({ state: 'detached' });
  expect((await api(suite.stack, 'GET', '/v1/campaigns', token)).body.items).toEqual([]);
  await page.context().close();
}, 60_000);

test('the message is parts in order: a media part moved above a text part, one removed, saved in the order shown', async () => {
  const token = await tenant(suite, 'Parts');
  const acc = await account(suite, token, 'parts-acc', 6000, 'Parts account');
  const uploaded = await api(suite.stack, 'POST', '/v1/media?filename=card.png', token, randomBytes(500), { 'content-type': 'image/png' });
  expect(uploaded.status).toBe(201);
  const page = await open(suite, token, '#/campaigns/new');
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await field(page, 'Name').fill('Three parts');
  await field(page, 'Account').selectOption(acc);
  await field(page, 'Chats (one chat id a line)').fill('q-1');
  const part = (n: number) => page.getByRole('group', { name: `Part ${n}` });
  await part(1).getByLabel('Text', { exact: true }).fill('Hello there');
  await page.getByRole('button', { name: 'Add text part' }).click();
  await part(2).getByLabel('Text', { exact: true }).fill('To be removed');
  await page.getByRole('button', { name: 'Add media part' }).click();
  await part(3).getByLabel('Media', { exact: true }).selectOption(uploaded.body.id);
  await part(3).getByLabel('Caption (optional)').fill('The card');
  await page.getByRole('button', { name: 'Remove part 2' }).click();
  expect(await page.locator('fieldset.part').count()).toBe(2);
  // the media part (now part 2) goes up, then down again under the text: the text stays first
  await page.getByRole('button', { name: 'Move part 2 up' }).click();
  expect(await part(1).getAttribute('data-part-type')).toBe('media');
  expect(await part(1).getByLabel('Caption (optional)').inputValue()).toBe('The card');
  await page.getByRole('button', { name: 'Move part 1 down' }).click();
  expect(await part(1).getByLabel('Text', { exact: true }).inputValue()).toBe('Hello there');
  await field(page, 'Repeats').selectOption('once');
  await field(page, "At (in the campaign's timezone)").fill(`${tomorrow()}T09:00`);
  await field(page, 'Timezone').fill('UTC');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('heading', { name: 'Three parts' }).waitFor();
  const [saved] = (await api(suite.stack, 'GET', '/v1/campaigns', token)).body.items;
  expect(saved.messages).toEqual([
    { type: 'text', text: 'Hello there' },
    { type: 'media', mediaId: uploaded.body.id, caption: 'The card' },
  ]);
  // editing shows the parts as saved, in order
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.getByRole('heading', { name: 'Edit Three parts' }).waitFor();
  expect(await part(1).getAttribute('data-part-type')).toBe('text');
  expect(await part(2).getByLabel('Caption (optional)').inputValue()).toBe('The card');
  await screenshots(page, 'campaign-parts');
  await page.context().close();
}, 60_000);
