import { gramjsClientFactory } from '@metronome/transports/telegram-user';
import { closedPort } from '../helpers/test-socks5-proxy.js';
import { type Api, call, createTenant, startApi } from './harness.js';

// A Telegram sign-in goes through the account's proxy, as its sends will (docs/platforms.md,
// "Proxy"): GramJS itself, through a proxy that refuses, answers a 409 naming the proxy (never
// its login), and nothing of a sign-in is saved.

let api: Api;
beforeAll(async () => {
  api = await startApi('tg_sign_in_proxy', {}, {}, undefined, () => ({ telegramSignIn: { makeClient: gramjsClientFactory, apiId: 1, apiHash: 'x' } }));
}, 30_000);
afterAll(async () => api?.close());

test('a sign-in through a refusing proxy is a 409 naming the proxy; nothing is saved', async () => {
  const port = await closedPort();
  const t = await createTenant(api, 'sign-in-proxy');
  const password = 'sign-in-proxy-password-08aa';
  const created = await call(api, 'POST', '/v1/accounts', t.token, { platform: 'telegram_user', name: 'p', proxy: `socks5://u:${password}@127.0.0.1:${port}` });
  const res = await call(api, 'POST', `/v1/accounts/${created.body.id}/telegram-sign-in`, t.token, { phone: '+447700900123' });
  expect(res.status).toBe(409);
  expect(res.body.error.message).toContain(`could not connect through the account's proxy: socks5://127.0.0.1:${port} refused the connection (ECONNREFUSED)`);
  expect(JSON.stringify(res.body)).not.toContain(password);
  const state = await call(api, 'GET', `/v1/accounts/${created.body.id}/telegram-sign-in`, t.token);
  expect(state.body.state).toBe('not_started');
}, 60_000);
