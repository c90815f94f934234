import type { AddressInfo } from 'node:net';
import { eventually } from '@metronome/testkit';
import type { Browser, Page } from 'playwright-core';
import type { ApiConfig } from '../../services/control-api/src/config.js';
import { telegramSignInOnFirstUse } from '../../services/control-api/src/platform-clients.js';
import { call, createTenant, startApi, type Api, type Tenant } from '../api/harness.js';
import { chromiumPath, launchBrowser, screenshots } from '../helpers/browser.js';
import { failOnBrowserErrors } from '../helpers/page-checks.js';
import { WireTelegram } from '../helpers/wire-telegram.js';

// Signing a Telegram user account in from the Accounts page, in a real browser: the real app
// serving the real console, the REAL GramJS client against the FAKE Telegram on the wire. Every
// wrong step shows under its field: a wrong code, a wrong password, an expired code, a banned number.

let api: Api;
let fake: WireTelegram;
let base: string;
let tenant: Tenant;
let browser: Browser;

beforeAll(async () => {
  chromiumPath();
  fake = new WireTelegram();
  await fake.start();
  // as the API builds its sign-in client from TELEGRAM_API_ID / _HASH / TELEGRAM_USER_DC / TELEGRAM_USER_SERVER_KEY
  const telegramUser: ApiConfig['telegramUser'] = { apiId: 1, apiHash: 'wire', clientModule: null, dc: `2@${fake.dc().ip}`, serverKey: fake.serverKeyPem };
  api = await startApi('console_tg', { telegramUser }, {}, undefined, () => ({ telegramSignIn: telegramSignInOnFirstUse({ telegramUser } as ApiConfig) }));
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  tenant = await createTenant(api, 'tg');
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await api?.close();
  await fake?.close();
});
failOnBrowserErrors();

async function accountCard(name: string): Promise<{ page: Page; accountId: string; close: () => Promise<void> }> {
  const created = await call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'telegram_user', name });
  expect(created.status).toBe(201);
  const accountId = created.body.id as string;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${base}/#token=${encodeURIComponent(tenant.token)}`);
  await page.getByRole('heading', { name: 'Activity' }).waitFor();
  await page.evaluate(`location.hash = '#/accounts'`);
  await page.locator(`li[data-account-id="${accountId}"] .pill-pairing`).waitFor();
  return { page, accountId, close: () => context.close() };
}

test('phone, a wrong code, the code, a wrong password, the password: each refusal under its field, then active', async () => {
  const phone = '+447700900201';
  fake.addUser(phone, { password: 'correct horse' });
  const { page, accountId, close } = await accountCard('Poster one');
  const card = page.locator(`li[data-account-id="${accountId}"]`);
  await card.getByLabel('Phone number').fill(phone);
  await card.getByRole('button', { name: 'Send code' }).click();

  await card.getByLabel('Code').fill('00000');
  await card.getByRole('button', { name: 'Sign in' }).click();
  await card.getByText(/wrong code/).waitFor();
  expect(await card.getByLabel('Code').getAttribute('aria-invalid')).toBe('true');
  await screenshots(page, 'accounts-telegram-wrong-code');

  await card.getByLabel('Code').fill(fake.codeOf(phone)!);
  await card.getByRole('button', { name: 'Sign in' }).click();
  await card.getByLabel('Two-step password').fill('wrong horse');
  await card.getByRole('button', { name: 'Check password' }).click();
  await card.getByText(/wrong two-step verification password/).waitFor();
  expect(await card.getByLabel('Two-step password').getAttribute('aria-invalid')).toBe('true');

  await card.getByLabel('Two-step password').fill('correct horse');
  await card.getByRole('button', { name: 'Check password' }).click();
  await card.locator('.pill-active').waitFor({ timeout: 10_000 });
  expect((await call(api, 'GET', `/v1/accounts/${accountId}`, tenant.token)).body.status).toBe('active');
  await close();
}, 60_000);

test('an expired code sends the form back to the phone number, saying why; a new code signs in', async () => {
  const phone = '+447700900202';
  fake.addUser(phone);
  const { page, accountId, close } = await accountCard('Poster two');
  const card = page.locator(`li[data-account-id="${accountId}"]`);
  await card.getByLabel('Phone number').fill(phone);
  await card.getByRole('button', { name: 'Send code' }).click();
  await card.getByLabel('Code').waitFor();
  fake.expireCode(phone);
  await card.getByLabel('Code').fill(fake.codeOf(phone)!);
  await card.getByRole('button', { name: 'Sign in' }).click();
  await card
    .getByRole('alert')
    .filter({ hasText: /the code expired/ })
    .waitFor();
  await card.getByLabel('Phone number').fill(phone);
  await card.getByRole('button', { name: 'Send code' }).click();
  await card.getByLabel('Code').waitFor();
  // the new code, not the expired one: the click's request may still be on its way to the fake
  await eventually('a new code sent', async () => fake.codeValid(phone));
  await card.getByLabel('Code').fill(fake.codeOf(phone)!);
  await card.getByRole('button', { name: 'Sign in' }).click();
  await card.locator('.pill-active').waitFor({ timeout: 10_000 });
  await close();
}, 60_000);

test('a banned number: the refusal shows under the phone number, and the account stays pairing', async () => {
  const phone = '+447700900203';
  fake.addUser(phone, { banned: true });
  const { page, accountId, close } = await accountCard('Poster three');
  const card = page.locator(`li[data-account-id="${accountId}"]`);
  await card.getByLabel('Phone number').fill(phone);
  await card.getByRole('button', { name: 'Send code' }).click();
  await card.getByText(/banned this phone number/).waitFor();
  expect(await card.getByLabel('Phone number').getAttribute('aria-invalid')).toBe('true');
  expect((await call(api, 'GET', `/v1/accounts/${accountId}`, tenant.token)).body.status).toBe('pairing');
  await close();
}, 60_000);

test('QR login: the card shows the code to scan, and the account is active once it was scanned', async () => {
  const phone = '+447700900204';
  fake.addUser(phone);
  const { page, accountId, close } = await accountCard('Poster four');
  const card = page.locator(`li[data-account-id="${accountId}"]`);
  await card.getByRole('button', { name: 'Sign in with a QR code' }).click();
  await card.getByRole('img', { name: /QR code/ }).waitFor();
  // the phone scans the code Telegram issued last (each look at the state asks Telegram again)
  const state = await call(api, 'GET', `/v1/accounts/${accountId}/telegram-sign-in`, tenant.token);
  fake.scanQr(Buffer.from(new URL(state.body.qr.url).searchParams.get('token')!, 'base64url'), phone);
  await card.getByRole('button', { name: 'I scanned it' }).click();
  await card.locator('.pill-active').waitFor({ timeout: 10_000 });
  await close();
}, 60_000);
