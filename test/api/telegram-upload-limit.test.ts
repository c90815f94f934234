import { TELEGRAM_BOT_UPLOAD_MAX_BYTES } from '@metronome/transports';
import { call, campaignBody, createAccount, createTenant, fields, startApi, type Api, type Tenant } from './harness.js';

// A Telegram bot uploads at most 50 MB while MEDIA_MAX_BYTES may allow more: a campaign of a
// `telegram` account naming a larger media is refused when saved, naming the part.

let api: Api;
let tenant: Tenant;
let bot: string;
let http: string;
let over: string;
let atLimit: string;

async function upload(bytes: number): Promise<string> {
  const res = await api.app.inject({
    method: 'POST',
    url: '/v1/media?filename=clip.mp4',
    headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'video/mp4' },
    payload: Buffer.alloc(bytes, 1),
  });
  if (res.statusCode !== 201) throw new Error(`media not stored: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body).id;
}

const withMedia = (accountId: string, mediaId: string) =>
  campaignBody(accountId, {
    messages: [
      { type: 'text', text: 'Hello' },
      { type: 'media', mediaId },
    ],
  });

beforeAll(async () => {
  api = await startApi('api_upload_limit', { mediaMaxBytes: 64 * 1024 * 1024 });
  tenant = await createTenant(api);
  const created = await call(api, 'POST', '/v1/accounts', tenant.token, {
    platform: 'telegram',
    name: 'Bot',
    credentials: { botToken: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw' },
  });
  bot = created.body.id;
  http = await createAccount(api, tenant);
  over = await upload(TELEGRAM_BOT_UPLOAD_MAX_BYTES + 1);
  atLimit = await upload(TELEGRAM_BOT_UPLOAD_MAX_BYTES);
}, 60_000);
afterAll(async () => api.close());

test('a telegram campaign naming a media over 50,000,000 bytes is a 400 naming that part and the limit', async () => {
  const res = await call(api, 'POST', '/v1/campaigns', tenant.token, withMedia(bot, over));
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  expect(fields(res)).toEqual(['messages.1.mediaId']);
  expect(res.body.error.details[0].message).toBe("the media is 50000001 bytes; a Telegram bot uploads at most 50,000,000 bytes (the Bot API's 50 MB)");
  expect(await api.db.selectFrom('campaigns').select('id').execute()).toEqual([]);
});

test('a media of exactly the limit is taken; on another platform a larger one too', async () => {
  expect((await call(api, 'POST', '/v1/campaigns', tenant.token, withMedia(bot, atLimit))).status).toBe(201);
  expect((await call(api, 'POST', '/v1/campaigns', tenant.token, withMedia(http, over))).status).toBe(201);
});

test('PATCH: moving a campaign to a bot, or giving a bot campaign a larger media, is refused the same way', async () => {
  const onHttp = (await call(api, 'POST', '/v1/campaigns', tenant.token, withMedia(http, over))).body.id;
  const moved = await call(api, 'PATCH', `/v1/campaigns/${onHttp}`, tenant.token, { accountId: bot });
  expect(moved.status).toBe(400);
  expect(fields(moved)).toEqual(['messages.1.mediaId']);

  const onBot = (await call(api, 'POST', '/v1/campaigns', tenant.token, withMedia(bot, atLimit))).body.id;
  const grown = await call(api, 'PATCH', `/v1/campaigns/${onBot}`, tenant.token, { messages: [{ type: 'media', mediaId: over, caption: 'big' }] });
  expect(grown.status).toBe(400);
  expect(fields(grown)).toEqual(['messages.0.mediaId']);
  // an edit of anything else never refuses
  expect((await call(api, 'PATCH', `/v1/campaigns/${onHttp}`, tenant.token, { name: 'renamed' })).status).toBe(200);
});
