import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { WhatsAppAuthRepository } from '@metronome/db';
import type { WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import type { Browser, Page } from 'playwright-core';
import { qrDataUrl } from '../../console/src/qr.js';
import { call, createTenant, startApi, type Api, type Tenant } from '../api/harness.js';
import { makePool, socketLeases } from '../platforms/whatsapp-setup.js';
import { chromiumPath, launchBrowser, screenshots } from '../helpers/browser.js';
import { failOnBrowserErrors } from '../helpers/page-checks.js';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { eventually } from '../helpers/test-env.js';

// Pairing WhatsApp from the Accounts page. The stack's API process pairs through Baileys with
// WhatsApp's own servers (it has no setting to point elsewhere), so here the control API runs in
// this process, as test/platforms/whatsapp-pairing.test.ts runs it: the real app serving the real
// console, the real socket pool on Redis and PostgreSQL, and a FAKE WhatsApp network issuing the
// QR payloads and accepting the scan. QR codes expire after 3 s here so that one is replaced.

const SECRETS_KEY = randomBytes(32);
let api: Api;
let network: FakeWhatsAppNetwork;
let pool: WhatsAppSocketPool;
let base: string;
let tenant: Tenant;
let browser: Browser;

beforeAll(async () => {
  chromiumPath();
  api = await startApi('console_wa', { secretsKey: SECRETS_KEY }, {}, undefined, (deps) => {
    network = new FakeWhatsAppNetwork(deps.clock);
    pool = makePool(network, socketLeases(deps.redis, deps.prefix), new WhatsAppAuthRepository(deps.db), [SECRETS_KEY], deps.clock, { qrTtlMs: 3_000 });
    return { whatsappPairing: pool };
  });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  tenant = await createTenant(api, 'qr');
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await pool?.close();
  await api?.close();
});
failOnBrowserErrors();

const qrSrc = (page: Page, accountId: string) => page.locator(`li[data-account-id="${accountId}"] .pairing img`).getAttribute('src');

test('the Accounts page shows the pairing QR as an image, replaces it when it expires, and shows the account connected after the scan', async () => {
  const created = await call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'whatsapp', name: 'Shop phone' });
  expect(created.status).toBe(201);
  const accountId = created.body.id as string;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  // every QR payload the API answered, in order
  const payloads: string[] = [];
  page.on('response', (r) => {
    if (r.url().endsWith(`/v1/accounts/${accountId}/pair`)) void r.json().then((b: { qr?: string }) => b.qr && payloads.push(b.qr));
  });
  await page.goto(`${base}/#token=${encodeURIComponent(tenant.token)}`);
  await page.getByRole('heading', { name: 'Activity' }).waitFor();
  await page.evaluate(`location.hash = '#/accounts'`);
  const card = page.locator(`li[data-account-id="${accountId}"]`);
  await card.locator('.pill-disconnected').waitFor();
  await card.getByRole('button', { name: 'Show QR code' }).click();

  await card.getByRole('img', { name: /QR code/ }).waitFor();
  await eventually('the first payload', async () => payloads.length >= 1, 5_000, 20);
  expect(await qrSrc(page, accountId)).toBe(qrDataUrl(payloads[0]!));
  await card.locator('.pill-pairing').waitFor();
  await screenshots(page, 'accounts-whatsapp');

  // the QR expires unused: the page asks for a new one and draws it
  await eventually('a second QR', async () => payloads.length >= 2, 15_000, 50);
  expect(payloads[1]).not.toBe(payloads[0]);
  await eventually('the second QR drawn', async () => (await qrSrc(page, accountId)) === qrDataUrl(payloads[1]!), 5_000, 50);

  await scan(accountId, '60123450009');
  await card.locator('.pill-active').waitFor({ timeout: 10_000 });
  expect(await card.locator('.pairing img').count()).toBe(0);
  expect((await call(api, 'GET', `/v1/accounts/${accountId}`, tenant.token)).body.status).toBe('active');
  await context.close();
}, 60_000);

/** The phone scans the QR code shown now (one may expire while the page is checked: the next one is scanned). */
async function scan(accountId: string, phone: string): Promise<void> {
  await eventually(
    'a QR code to scan',
    async () => {
      try {
        network.completePairing(accountId, phone);
        return true;
      } catch {
        return false;
      }
    },
    15_000,
    50,
  );
}

test('Add account → WhatsApp: the dialog adds the account, shows its QR code, and says paired once the phone accepts', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${base}/#token=${encodeURIComponent(tenant.token)}`);
  await page.getByRole('heading', { name: 'Activity' }).waitFor();
  await page.evaluate(`location.hash = '#/accounts'`);
  await page.getByRole('button', { name: 'Add account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add account' });
  await dialog.getByLabel('Platform', { exact: true }).selectOption('whatsapp');
  await dialog.getByLabel('Name', { exact: true }).fill('Front desk');
  await dialog.getByRole('button', { name: 'Save and pair' }).click();
  const pairing = page.getByRole('dialog', { name: 'Pair Front desk' });
  await pairing.getByRole('button', { name: 'Show QR code' }).click();
  await pairing.getByRole('img', { name: /QR code/ }).waitFor();
  const listed = (await call(api, 'GET', '/v1/accounts', tenant.token)).body.items.filter((a: { name: string }) => a.name === 'Front desk');
  expect(listed).toEqual([expect.objectContaining({ platform: 'whatsapp', status: 'pairing' })]);
  await screenshots(page, 'accounts-add-whatsapp');

  await scan(listed[0].id, '60123450010');
  await pairing.getByText('Paired: the account is active.').waitFor({ timeout: 10_000 });
  await pairing.getByRole('button', { name: 'Done' }).click();
  await page.locator(`li[data-account-id="${listed[0].id}"] .pill-active`).waitFor();
  await context.close();
}, 60_000);
