import type { AddressInfo } from 'node:net';
import { open } from '@metronome/core';
import type { ApiConfig } from '../../services/control-api/src/config.js';
import { telegramSignInOnFirstUse } from '../../services/control-api/src/platform-clients.js';
import { call, startApi, createTenant, type Api, type Tenant } from '../api/harness.js';
import { WireTelegram } from '../helpers/wire-telegram.js';

// Signing a telegram_user account in through the control API over HTTP, with the REAL GramJS
// client (as the API builds it from TELEGRAM_API_ID / TELEGRAM_API_HASH / TELEGRAM_USER_DC /
// TELEGRAM_USER_SERVER_KEY) against the FAKE Telegram on the wire: the code, the two-step
// password (SRP), the QR code, and each wrong step (a wrong code, an expired code, a wrong
// password, a banned number, a number with no account), nothing half-saved.

let api: Api;
let base: string;
let tenant: Tenant;
let fake: WireTelegram;

beforeAll(async () => {
  fake = new WireTelegram();
  await fake.start();
  const telegramUser: ApiConfig['telegramUser'] = { apiId: 1, apiHash: 'wire', clientModule: null, dc: `2@${fake.dc().ip}`, serverKey: fake.serverKeyPem };
  api = await startApi('tg_sign_in', { telegramUser }, {}, undefined, () => ({ telegramSignIn: telegramSignInOnFirstUse({ telegramUser } as ApiConfig) }));
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  tenant = await createTenant(api, 'telegram users');
}, 30_000);
afterAll(async () => {
  await api?.close();
  await fake?.close();
});

async function http(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${tenant.token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

async function newAccount(): Promise<string> {
  const res = await http('POST', '/v1/accounts', { platform: 'telegram_user', name: 'poster' });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ status: 'pairing', platformDeduplicates: true });
  return res.body.id;
}

const row = (id: string) => api.db.selectFrom('accounts').select(['status', 'credentials', 'external_id']).where('id', '=', id).executeTakeFirstOrThrow();
const field = (res: { body: any }) => res.body.error?.details?.[0]?.field;

test('phone, a wrong code, the right code, a wrong password, the right password: signed in, the session sealed, the account active', async () => {
  const phone = '+447700900101';
  const userId = fake.addUser(phone, { password: 'hunter2' });
  const id = await newAccount();
  expect((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body).toMatchObject({ state: 'not_started' });

  const sent = await http('POST', `/v1/accounts/${id}/telegram-sign-in`, { phone });
  expect(sent.status).toBe(200);
  expect(sent.body).toMatchObject({ state: 'code_sent', phone: '+44…0101', error: null });

  const wrong = await http('POST', `/v1/accounts/${id}/telegram-sign-in/code`, { code: '00000' });
  expect(wrong.status).toBe(400);
  expect(field(wrong)).toBe('code');
  expect((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body).toMatchObject({
    state: 'code_sent',
    error: { code: 'phone_code_invalid', field: 'code' },
  });
  expect(await row(id)).toMatchObject({ status: 'pairing', credentials: null });

  const code = await http('POST', `/v1/accounts/${id}/telegram-sign-in/code`, { code: fake.codeOf(phone) });
  expect(code.status).toBe(200);
  expect(code.body).toMatchObject({ state: 'password_needed', error: null });
  expect(await row(id)).toMatchObject({ status: 'pairing', credentials: null });

  const badPassword = await http('POST', `/v1/accounts/${id}/telegram-sign-in/password`, { password: 'hunter3' });
  expect(badPassword.status).toBe(400);
  expect(field(badPassword)).toBe('password');
  expect((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body).toMatchObject({
    state: 'password_needed',
    error: { code: 'password_hash_invalid', field: 'password' },
  });
  expect(await row(id)).toMatchObject({ status: 'pairing', credentials: null });

  const done = await http('POST', `/v1/accounts/${id}/telegram-sign-in/password`, { password: 'hunter2' });
  expect(done.status).toBe(200);
  expect(done.body).toMatchObject({ state: 'signed_in', error: null });
  const signedIn = await row(id);
  expect(signedIn).toMatchObject({ status: 'active', external_id: userId });
  const { session } = JSON.parse(open(signedIn.credentials!, [api.config.secretsKey]).toString('utf8')) as { session: string };
  expect(fake.userOf(session)).toBe(userId);
  // sealed: the session string is nowhere in the stored bytes
  expect(signedIn.credentials!.includes(Buffer.from(session))).toBe(false);
  expect((await api.db.selectFrom('telegram_sign_ins').selectAll().where('account_id', '=', id).execute()).length).toBe(0);
});

test('no two-step password: the code signs in', async () => {
  const phone = '+447700900102';
  fake.addUser(phone);
  const id = await newAccount();
  await http('POST', `/v1/accounts/${id}/telegram-sign-in`, { phone });
  const done = await http('POST', `/v1/accounts/${id}/telegram-sign-in/code`, { code: fake.codeOf(phone) });
  expect(done.body).toMatchObject({ state: 'signed_in' });
  expect((await row(id)).status).toBe('active');
});

test('an expired code: failed, naming the code, nothing saved; a new code signs in', async () => {
  const phone = '+447700900103';
  fake.addUser(phone);
  const id = await newAccount();
  await http('POST', `/v1/accounts/${id}/telegram-sign-in`, { phone });
  const code = fake.codeOf(phone);
  fake.expireCode(phone);
  const expired = await http('POST', `/v1/accounts/${id}/telegram-sign-in/code`, { code });
  expect(expired.status).toBe(400);
  expect(field(expired)).toBe('code');
  expect((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body).toMatchObject({
    state: 'failed',
    error: { code: 'phone_code_expired', field: 'code' },
  });
  expect(await row(id)).toMatchObject({ status: 'pairing', credentials: null, external_id: null });
  // the step after a failure is refused until a new code is asked for
  expect((await http('POST', `/v1/accounts/${id}/telegram-sign-in/code`, { code })).status).toBe(409);
  await http('POST', `/v1/accounts/${id}/telegram-sign-in`, { phone });
  expect((await http('POST', `/v1/accounts/${id}/telegram-sign-in/code`, { code: fake.codeOf(phone) })).body).toMatchObject({ state: 'signed_in' });
});

test('a banned number: failed, naming the phone, nothing saved', async () => {
  const phone = '+447700900104';
  fake.addUser(phone, { banned: true });
  const id = await newAccount();
  const banned = await http('POST', `/v1/accounts/${id}/telegram-sign-in`, { phone });
  expect(banned.status).toBe(400);
  expect(field(banned)).toBe('phone');
  expect(JSON.stringify(banned.body.error)).toContain('banned');
  expect((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body).toMatchObject({
    state: 'failed',
    error: { code: 'phone_number_banned', field: 'phone' },
  });
  expect(await row(id)).toMatchObject({ status: 'pairing', credentials: null });
});

test('a number with no Telegram account: the code is sent (to sign up), the sign-in fails naming the phone, nothing saved', async () => {
  const phone = '+447700900108';
  const id = await newAccount();
  expect((await http('POST', `/v1/accounts/${id}/telegram-sign-in`, { phone })).body).toMatchObject({ state: 'code_sent' });
  const unoccupied = await http('POST', `/v1/accounts/${id}/telegram-sign-in/code`, { code: fake.codeOf(phone) });
  expect(unoccupied.status).toBe(400);
  expect(field(unoccupied)).toBe('phone');
  expect((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body).toMatchObject({
    state: 'failed',
    error: { code: 'phone_number_unoccupied', field: 'phone' },
  });
  expect(await row(id)).toMatchObject({ status: 'pairing', credentials: null, external_id: null });
});

test('a malformed phone number is refused naming the field; another platform cannot sign in', async () => {
  const id = await newAccount();
  const bad = await http('POST', `/v1/accounts/${id}/telegram-sign-in`, { phone: '12ab' });
  expect(bad.status).toBe(400);
  expect(field(bad)).toBe('phone');
  const wa = await http('POST', '/v1/accounts', { platform: 'whatsapp', name: 'wa' });
  expect((await http('POST', `/v1/accounts/${wa.body.id}/telegram-sign-in`, { phone: '+447700900105' })).status).toBe(409);
});

test('QR login: the code to scan, then the two-step password; a GET before the scan keeps waiting', async () => {
  const phone = '+447700900106';
  const userId = fake.addUser(phone, { password: 'qr-pass' });
  const id = await newAccount();
  const shown = await http('POST', `/v1/accounts/${id}/telegram-sign-in/qr`);
  expect(shown.status).toBe(200);
  expect(shown.body).toMatchObject({ state: 'qr_shown', qr: { url: expect.stringMatching(/^tg:\/\/login\?token=[A-Za-z0-9_-]+$/) } });
  expect((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body).toMatchObject({ state: 'qr_shown' });
  const token = Buffer.from(new URL((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body.qr.url).searchParams.get('token')!, 'base64url');
  fake.scanQr(token, phone);
  expect((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body).toMatchObject({ state: 'password_needed', qr: null });
  expect(await row(id)).toMatchObject({ status: 'pairing', credentials: null });
  const done = await http('POST', `/v1/accounts/${id}/telegram-sign-in/password`, { password: 'qr-pass' });
  expect(done.body).toMatchObject({ state: 'signed_in' });
  expect(await row(id)).toMatchObject({ status: 'active', external_id: userId });
});

test('QR login without two-step verification: signed in once scanned', async () => {
  const phone = '+447700900107';
  const userId = fake.addUser(phone);
  const id = await newAccount();
  const shown = await http('POST', `/v1/accounts/${id}/telegram-sign-in/qr`);
  fake.scanQr(Buffer.from(new URL(shown.body.qr.url).searchParams.get('token')!, 'base64url'), phone);
  expect((await http('GET', `/v1/accounts/${id}/telegram-sign-in`)).body).toMatchObject({ state: 'signed_in' });
  expect(await row(id)).toMatchObject({ status: 'active', external_id: userId });
});

test('a deployment without a Telegram application answers 409 saying what to set, and still shows the state', async () => {
  const telegramUser: ApiConfig['telegramUser'] = { apiId: 0, apiHash: '', clientModule: null, dc: `2@${fake.dc().ip}`, serverKey: fake.serverKeyPem };
  const bare = await startApi('tg_sign_in_no_app', { telegramUser }, {}, undefined, () => ({
    telegramSignIn: telegramSignInOnFirstUse({ telegramUser } as ApiConfig),
  }));
  try {
    const owner = await createTenant(bare, 'no app');
    const acc = await call(bare, 'POST', '/v1/accounts', owner.token, { platform: 'telegram_user', name: 'poster' });
    expect((await call(bare, 'GET', `/v1/accounts/${acc.body.id}/telegram-sign-in`, owner.token)).status).toBe(200);
    const started = await call(bare, 'POST', `/v1/accounts/${acc.body.id}/telegram-sign-in`, owner.token, { phone: '+447700900555' });
    expect(started.status).toBe(409);
    expect(started.body.error.message).toMatch(/set TELEGRAM_API_ID and TELEGRAM_API_HASH/);
  } finally {
    await bare.close();
  }
});
