import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { api } from '../helpers/stack.js';
import { linkedSessionBundle, startWireWhatsApp, type WireWhatsApp } from '../helpers/wire-whatsapp.js';
import { consoleSuite, open, tenant } from './console-kit.js';

// "Import a linked session" in a real Chromium against the real stack, whose API connects with the
// real Baileys to @openclaw/crabline's WhatsApp Web server (WHATSAPP_WS_URL): the operator picks
// the files of their Baileys script's session folder, and the account turns active on its card.

let wire: WireWhatsApp;
beforeAll(async () => {
  wire = await startWireWhatsApp();
}, 30_000);
// no sender: the import is the API's alone
const suite = consoleSuite(() => ({ senders: 0, env: { WHATSAPP_WS_URL: wire.url } }));
afterAll(async () => {
  await wire?.close();
}, 30_000);

test('a WhatsApp account imports its session folder from the card and turns active; a folder without creds.json or a bad file is named', async () => {
  const token = await tenant(suite, 'Session import');
  const created = await api(suite.stack, 'POST', '/v1/accounts', token, { platform: 'whatsapp', name: 'Shop phone' });
  expect(created.body.status).toBe('disconnected');
  const bundle = await linkedSessionBundle(wire.url, '601440000', ['60155500001@s.whatsapp.net']);
  const folder = await mkdtemp(path.join(tmpdir(), 'console-session-'));
  try {
    // the folder as Baileys' useMultiFileAuthState left it: creds.json and one file per key
    const files = [path.join(folder, 'creds.json')];
    await writeFile(files[0]!, JSON.stringify(bundle.creds));
    for (const [name, value] of Object.entries(bundle.keys)) {
      files.push(path.join(folder, `${name}.json`));
      await writeFile(files.at(-1)!, JSON.stringify(value));
    }
    const broken = path.join(folder, 'contacts-1.json');
    await writeFile(broken, '{}');

    const page = await open(suite, token, '#/accounts');
    const card = page.locator(`li[data-account-id="${created.body.id}"]`);
    const input = card.getByLabel('Session files');
    const submit = card.getByRole('button', { name: 'Import a linked session' });

    await input.setInputFiles(files.slice(1));
    await submit.click();
    expect(await card.getByRole('alert').innerText()).toContain('creds.json is not among the files chosen');

    await input.setInputFiles([...files, broken]);
    await submit.click();
    await card.getByRole('alert').getByText('keys.contacts-1:').waitFor();
    expect((await api(suite.stack, 'GET', `/v1/accounts/${created.body.id}`, token)).body.status).toBe('disconnected');

    await input.setInputFiles(files);
    await submit.click();
    await card.locator('h2 .pill-active').waitFor({ timeout: 30_000 });
    expect(await card.getByLabel('Session files').count()).toBe(0);
    expect((await api(suite.stack, 'GET', `/v1/accounts/${created.body.id}`, token)).body.status).toBe('active');
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}, 90_000);
