import type { Page } from 'playwright-core';
import { screenshots } from '../helpers/browser.js';
import { api } from '../helpers/stack.js';
import { account, API_KEY, consoleSuite, open, tenant } from './console-kit.js';

// The Accounts page in a real Chromium against the real stack: an account added through the
// Add account dialog (its field errors beside the fields first), and an account's settings
// edited, sent as a PATCH of only what changed and answered by the API.

const suite = consoleSuite();

const card = (page: Page, id: string) => page.locator(`li[data-account-id="${id}"]`);

test('Add account: a bad API key is named beside its field and nothing is saved; fixed, the http account is listed', async () => {
  const token = await tenant(suite, 'Add');
  const page = await open(suite, token, '#/accounts');
  await page.getByText('No accounts yet.').waitFor();
  await page.getByRole('button', { name: 'Add account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add account' });
  await dialog.waitFor();
  await dialog.getByLabel('Platform', { exact: true }).selectOption('http');
  await dialog.getByLabel('Name', { exact: true }).fill('Shop line');
  await dialog.getByLabel('Account id on the platform').fill('add-acc-1');
  await dialog.getByLabel('API key').fill('short');
  await dialog.getByRole('button', { name: 'Save account' }).click();

  const note = dialog.locator('#new-apiKey-error');
  await note.waitFor();
  expect(await dialog.getByLabel('API key').getAttribute('aria-invalid')).toBe('true');
  expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('new-apiKey');
  expect(await dialog.locator('[aria-invalid="true"]').count()).toBe(1);
  expect(await dialog.getByLabel('Name', { exact: true }).inputValue()).toBe('Shop line');
  expect((await api(suite.stack, 'GET', '/v1/accounts', token)).body.items).toEqual([]);
  await screenshots(page, 'accounts-add');

  await dialog.getByLabel('API key').fill(API_KEY);
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.waitFor({ state: 'hidden' });
  const [saved] = (await api(suite.stack, 'GET', '/v1/accounts', token)).body.items;
  expect(saved).toMatchObject({ platform: 'http', name: 'Shop line', externalId: 'add-acc-1', status: 'active' });
  const listed = card(page, saved.id);
  await listed.getByRole('heading', { name: /Shop line/ }).waitFor();
  expect(await listed.innerText()).toContain('http · add-acc-1');
  await page.context().close();
}, 60_000);

test("Add account starts each platform at the API's own defaults, says what they do, and sends the limits as set", async () => {
  const token = await tenant(suite, 'Limits');
  const defaults = (await api(suite.stack, 'GET', '/v1/account-defaults', token)).body.items as any[];
  const of = (platform: string) => defaults.find((d) => d.platform === platform);
  const page = await open(suite, token, '#/accounts');
  const posts: unknown[] = [];
  page.on('request', (r) => r.method() === 'POST' && r.url().endsWith('/v1/accounts') && posts.push(r.postDataJSON()));
  await page.getByRole('button', { name: 'Add account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add account' });
  const limits = dialog.getByRole('group', { name: 'Sending limits' });
  const field = (label: string) => limits.getByLabel(label, { exact: true });

  // WhatsApp: the API's human gap, so far fewer sends a minute than the pace; no warm-up unless ticked
  await dialog.getByLabel('Platform', { exact: true }).selectOption('whatsapp');
  const wa = of('whatsapp');
  expect(wa.sendDelaySeconds).not.toBeNull();
  await limits.getByText(`a ${wa.sendDelaySeconds.min}–${wa.sendDelaySeconds.max} s gap between sends`).waitFor();
  expect(await field('Pace (sends a minute)').inputValue()).toBe(String(wa.maxSendPerMinute));
  expect(await field('Gap at least').inputValue()).toBe(String(wa.sendDelaySeconds.min));
  expect(await field('Gap at most').inputValue()).toBe(String(wa.sendDelaySeconds.max));
  expect(await limits.getByLabel(/^Warm-up/).isChecked()).toBe(false);
  expect(await limits.innerText()).toContain('WhatsApp bans numbers that send like a machine');
  expect(await limits.innerText()).toMatch(/In effect: about [\d.]+–[\d.]+ sends a minute/);
  // each field says what it does, read with it
  expect(await field('Pace (sends a minute)').getAttribute('aria-describedby')).toBe('new-pace-hint');
  const warmupHint = await limits.locator('#new-warmup-hint').innerText();
  expect(warmupHint).toContain(`${of('whatsapp').warmupSteps[0].dailyCap} sends a day at first`);
  await screenshots(page, 'accounts-add-limits');

  // HTTP: its own defaults (no gap), then set by the operator and sent as shown
  await dialog.getByLabel('Platform', { exact: true }).selectOption('http');
  await limits.getByText(`In effect: at most ${of('http').maxSendPerMinute} sends a minute.`).waitFor();
  expect(await field('Gap at least').inputValue()).toBe(of('http').sendDelaySeconds === null ? '' : String(of('http').sendDelaySeconds.min));
  await dialog.getByLabel('Name', { exact: true }).fill('Paced line');
  await dialog.getByLabel('Account id on the platform').fill('limits-acc-1');
  await dialog.getByLabel('API key').fill(API_KEY);
  await field('Pace (sends a minute)').fill('20');
  await limits.getByLabel(/^Warm-up/).check();
  await field('Gap at least').fill('12');
  await field('Gap at most').fill('6');
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.locator('#new-gapMax-error').waitFor();
  expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('new-gapMax');
  await field('Gap at most').fill('15');
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.waitFor({ state: 'hidden' });
  expect(posts.at(-1)).toMatchObject({ platform: 'http', maxSendPerMinute: 20, sendDelaySeconds: { min: 12, max: 15 }, warmup: {} });
  const [saved] = (await api(suite.stack, 'GET', '/v1/accounts', token)).body.items;
  expect(saved).toMatchObject({ name: 'Paced line', maxSendPerMinute: 20, sendDelaySeconds: { min: 12, max: 15 }, warmup: { capToday: 20 } });
  await page.context().close();
}, 60_000);

test('Settings: a new pace and caps are sent alone and shown as the API answers; a bad human gap is named beside its field', async () => {
  const token = await tenant(suite, 'Settings');
  const id = await account(suite, token, 'settings-acc', 60, 'Settings account');
  const page = await open(suite, token, '#/accounts');
  const patches: unknown[] = [];
  page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.postDataJSON()));
  await card(page, id).getByRole('button', { name: 'Settings of Settings account' }).click();
  const form = page.getByRole('form', { name: 'Settings of Settings account' });
  await form.waitFor();
  // an http account shows no typing and no opt-out keywords: the platform takes neither
  expect(await form.getByLabel('Characters a second').count()).toBe(0);
  expect(await form.getByLabel(/Opt-out keywords/).count()).toBe(0);

  await form.getByLabel('Pace (sends a minute)').fill('90');
  await form.getByLabel('Daily cap (empty: none)').fill('500');
  await form.getByLabel(/^Warm-up/).check();
  await form.getByLabel('Gap at least').fill('20');
  await form.getByLabel('Gap at most').fill('10');
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.locator(`#set-${id}-gapMax-error`).waitFor();
  expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe(`set-${id}-gapMax`);
  expect((await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body).toMatchObject({ maxSendPerMinute: 60, dailyCap: null, warmup: null });

  await form.getByLabel('Gap at most').fill('40');
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Settings saved.').waitFor();
  const after = (await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body;
  expect(after).toMatchObject({ maxSendPerMinute: 90, dailyCap: 500, sendDelaySeconds: { min: 20, max: 40 }, warmup: { capToday: 20 } });
  expect(patches).toEqual([
    { maxSendPerMinute: 90, dailyCap: 500, warmup: {}, sendDelaySeconds: { min: 20, max: 10 } },
    { maxSendPerMinute: 90, dailyCap: 500, warmup: {}, sendDelaySeconds: { min: 20, max: 40 } },
  ]);
  const facts = await card(page, id).locator('dl.facts').innerText();
  expect(facts).toContain('90/min');
  expect(facts).toContain('500/day, warm-up 20 today');
  expect(facts).toContain('20–40 s');
  await form.getByText('Warm-up cap today: 20 sends.').waitFor();
  await screenshots(page, 'accounts-settings');

  // saved again unchanged: nothing is sent
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Nothing changed.').waitFor();
  expect(patches).toHaveLength(2);
  await page.context().close();
}, 60_000);

test('Add account → Telegram: a malformed bot token is named beside it; fixed, the bot is listed, and its settings offer typing (no opt-out keywords)', async () => {
  const token = await tenant(suite, 'Telegram');
  const page = await open(suite, token, '#/accounts');
  await page.getByRole('button', { name: 'Add account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add account' });
  await dialog.getByLabel('Platform', { exact: true }).selectOption('telegram');
  expect(await dialog.getByLabel('API key').count()).toBe(0);
  await dialog.getByLabel('Name', { exact: true }).fill('Shop bot');
  await dialog.getByLabel('Bot token').fill('not-a-token');
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.locator('#new-botToken-error').waitFor();
  expect(await dialog.locator('#new-botToken-error').innerText()).toContain('expected a Telegram bot token');
  await dialog.getByLabel('Bot token').fill(`123456:${'A'.repeat(35)}`);
  await dialog.getByRole('button', { name: 'Save account' }).click();
  await dialog.waitFor({ state: 'hidden' });
  const [saved] = (await api(suite.stack, 'GET', '/v1/accounts', token)).body.items;
  expect(saved).toMatchObject({ platform: 'telegram', name: 'Shop bot' });
  await card(page, saved.id).getByRole('button', { name: 'Settings of Shop bot' }).click();
  const form = page.getByRole('form', { name: 'Settings of Shop bot' });
  await form.getByLabel('Characters a second').fill('30');
  await form.getByLabel('Longest typing (seconds)').fill('4');
  expect(await form.getByLabel(/Opt-out keywords/).count()).toBe(0);
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Settings saved.').waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${saved.id}`, token)).body.typing).toEqual({ charsPerSecond: 30, maxSeconds: 4 });
  await page.context().close();
}, 60_000);

test("Settings → a Telegram account's opt-out keywords: shown, a bad one named beside the field, then saved as typed", async () => {
  const token = await tenant(suite, 'Opt-out');
  const created = await api(suite.stack, 'POST', '/v1/accounts', token, { platform: 'telegram_user', name: 'Poster' });
  expect(created.body.optOutKeywords).toEqual(['STOP', 'UNSUBSCRIBE']);
  const id: string = created.body.id;
  const page = await open(suite, token, '#/accounts');
  const patches: unknown[] = [];
  page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.postDataJSON()));
  await card(page, id).getByRole('button', { name: 'Settings of Poster' }).click();
  const form = page.getByRole('form', { name: 'Settings of Poster' });
  const keywords = form.getByLabel('Opt-out keywords (one a line; empty: off)');
  expect(await keywords.inputValue()).toBe('STOP\nUNSUBSCRIBE');
  expect(await form.innerText()).toContain('writes exactly one of these to this account in a private chat');

  // over 64 characters: the API's error goes beside the keywords, nothing is saved
  await keywords.fill(`STOP\n${'X'.repeat(65)}`);
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.locator(`#set-${id}-keywords-error`).waitFor();
  expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe(`set-${id}-keywords`);
  expect(await keywords.getAttribute('aria-invalid')).toBe('true');
  expect((await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body.optOutKeywords).toEqual(['STOP', 'UNSUBSCRIBE']);

  await keywords.fill('STOP\nARRÊT\n  BAJA  ');
  await form.getByRole('button', { name: 'Save settings' }).click();
  await form.getByText('Settings saved.').waitFor();
  expect((await api(suite.stack, 'GET', `/v1/accounts/${id}`, token)).body.optOutKeywords).toEqual(['STOP', 'ARRÊT', 'BAJA']);
  expect(await keywords.inputValue()).toBe('STOP\nARRÊT\nBAJA');
  expect(await form.locator(`#set-${id}-keywords-error`).count()).toBe(0);
  expect(patches).toEqual([{ optOutKeywords: ['STOP', 'X'.repeat(65)] }, { optOutKeywords: ['STOP', 'ARRÊT', 'BAJA'] }]);
  await page.context().close();
}, 60_000);
