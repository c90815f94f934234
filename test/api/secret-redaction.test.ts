import { open, processSecrets } from '@metronome/core';
import { createLogger } from '@metronome/observability';
import { ADMIN_TOKEN, call, createTenant, startApi, type Api, type Tenant } from './harness.js';

// Secrets never reach the log: the API's pino output at its most verbose level is captured
// while requests carry the admin token, a tenant token and a Telegram bot token (in good and
// in rejected bodies), and none of the three appears anywhere in it. Also: what is stored is
// sealed, and still opens after a key rotation.

const BOT_TOKEN = '7012345678:AAH-redaction_probe_ZZZZZZZZZZZZZZZZZ';
const lines: string[] = [];
const sink = { write: (line: string) => void lines.push(line) };

let api: Api;
let tenant: Tenant;
beforeAll(async () => {
  api = await startApi('api_redaction', {}, {}, createLogger('control-api-test', 'trace', sink));
  tenant = await createTenant(api, 'redaction');
}, 30_000);
afterAll(async () => api.close());

test('no token or credential appears in the log of a session of requests', async () => {
  const account = await call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'telegram', name: 'bot', credentials: { botToken: BOT_TOKEN } });
  expect(account.status).toBe(201);
  expect(JSON.stringify(account.body)).not.toContain(BOT_TOKEN);
  // rejected bodies carrying the bot token: an unknown field beside it, a bad sibling, broken JSON
  expect(
    (await call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'telegram', name: 'bot', credentials: { botToken: BOT_TOKEN, extra: 1 } })).status,
  ).toBe(400);
  expect((await call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'telegram', name: '', credentials: { botToken: BOT_TOKEN } })).status).toBe(400);
  expect((await call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'http', name: 'x', externalId: BOT_TOKEN })).status).toBe(400);
  const broken = await api.app.inject({
    method: 'POST',
    url: '/v1/accounts',
    headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
    payload: `{"platform":"telegram","credentials":{"botToken":"${BOT_TOKEN}"`,
  });
  expect(broken.statusCode).toBe(400);
  // the tokens in use, and near misses of them (a token with a typo is still a secret)
  expect((await call(api, 'GET', '/v1/me', ADMIN_TOKEN)).status).toBe(200);
  expect((await call(api, 'GET', `/v1/accounts/${account.body.id}`, tenant.token)).status).toBe(200);
  expect((await call(api, 'GET', '/v1/me', `${ADMIN_TOKEN}x`)).status).toBe(401);
  expect((await call(api, 'GET', '/v1/me', `${tenant.token}x`)).status).toBe(401);
  expect((await call(api, 'GET', '/v1/no-such-route', tenant.token)).status).toBe(404);

  const log = lines.join('');
  // The capture really holds the requests, so the absence below means something.
  expect(log).toContain('incoming request');
  expect(log).toContain('request rejected');
  expect(log).toContain('/v1/accounts');
  for (const secret of [ADMIN_TOKEN, tenant.token, BOT_TOKEN, BOT_TOKEN.split(':')[1]!]) expect(log).not.toContain(secret);
});

test('the redaction paths cover where a secret would be logged by mistake', () => {
  const captured: string[] = [];
  const logger = createLogger('redaction-probe', 'info', { write: (line: string) => void captured.push(line) });
  logger.info({ req: { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, cookie: 'session=abc' } } }, 'request');
  logger.info({ headers: { authorization: `Bearer ${tenant.token}` } }, 'headers');
  logger.info({ account: { id: 'a', credentials: { botToken: BOT_TOKEN } } }, 'account');
  logger.info({ job: { account: { credentials: BOT_TOKEN } } }, 'nested account');
  logger.info({ body: { credentials: { botToken: BOT_TOKEN } } }, 'body');
  logger.info({ token: tenant.token, botToken: BOT_TOKEN }, 'flat');
  const out = captured.join('');
  expect(captured).toHaveLength(6);
  expect(out).toContain('[redacted]');
  for (const secret of [ADMIN_TOKEN, tenant.token, BOT_TOKEN, 'session=abc']) expect(out).not.toContain(secret);
});

test('a secret the process holds is scrubbed by value from every logged line, wherever it appears', () => {
  const secret = 'by-value-probe-0123456789abcdef';
  const captured: string[] = [];
  const logger = createLogger('scrub-probe', 'info', { write: (line: string) => void captured.push(line) });
  processSecrets().add(secret);
  logger.warn(`message quoting ${secret}`);
  logger.warn({ err: new Error(`thrown with ${secret}`) }, 'error object');
  logger.child({ runId: 'r' }).info({ detail: { deep: [`/bot${encodeURIComponent(secret)}/x`] }, plain: secret }, 'nested');
  const out = captured.join('');
  expect(captured).toHaveLength(3);
  expect(out).toContain('[redacted]');
  expect(out).not.toContain(secret);
  expect(out).not.toContain(encodeURIComponent(secret));
});

test('credentials are sealed under SECRETS_KEY and open after a rotation with the old key as the previous one', async () => {
  const res = await call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'telegram', name: 'rotated', credentials: { botToken: BOT_TOKEN } });
  expect(res.status).toBe(201);
  const row = await api.db.selectFrom('accounts').select('credentials').where('id', '=', res.body.id).executeTakeFirstOrThrow();
  const sealed = row.credentials as Buffer;
  expect(sealed.toString('latin1')).not.toContain(BOT_TOKEN);
  const oldKey = api.config.secretsKey;
  const newKey = Buffer.alloc(32, 9);
  // the sender after a rotation: SECRETS_KEY = new, SECRETS_KEY_PREVIOUS = old
  expect(JSON.parse(open(sealed, [newKey, oldKey]).toString('utf8'))).toEqual({ botToken: BOT_TOKEN });
  // and without the old key it cannot be opened: the key really is needed
  expect(() => open(sealed, [newKey])).toThrow();
});
