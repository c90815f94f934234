import { randomBytes } from 'node:crypto';
import { FakeTelegramBotApi } from '../helpers/fake-telegram-bot-api.js';
import { openEventStream, type EventStream } from '../helpers/sse-client.js';
import { api, sandbox, startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// Secrets are scrubbed by value, whatever produced the text. Two careless platforms echo the
// credentials they were sent in every error: the sandbox's fake echo fault quotes the
// Authorization header (so the API key), and the fake Bot API quotes the request path (so the
// bot token). Real processes run the whole pipeline; neither secret may appear in any log line
// of any service, any stored error, any API answer or any SSE event.

let fake: FakeTelegramBotApi;
let stack: Stack;
let events: EventStream;
beforeAll(async () => {
  fake = await FakeTelegramBotApi.start();
  // one attempt: the echoed error is the final, stored one at once
  stack = await startStack({ senders: 2, senderEnv: { TELEGRAM_API_URL: fake.url, MAX_RETRIES: '1', LOG_LEVEL: 'debug' } });
}, 60_000);
afterAll(async () => {
  events?.close();
  await stack?.stop();
  await fake?.close();
}, 60_000);

test('an API key and a bot token echoed in every platform error reach no log line, stored error, API answer or event', async () => {
  const tenant = await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'echo' });
  const token: string = tenant.body.token;
  events = await openEventStream(stack.apiUrl, token);
  expect(events.status).toBe(200);

  const apiKey = `echo-key-${randomBytes(18).toString('base64url')}`;
  const botToken = `7002:${randomBytes(24).toString('base64url')}`;
  const externalId = 'echo-http';
  await fetch(`${stack.sandboxUrl}/sandbox/accounts/${externalId}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ fakeEchoAuthorization: true }),
  });
  fake.addBot(botToken);
  fake.echoToken(botToken);

  const httpAccount = await api(stack, 'POST', '/v1/accounts', token, {
    platform: 'http',
    name: 'h',
    externalId,
    credentials: { apiKey },
    maxSendPerMinute: 6000,
  });
  const botAccount = await api(stack, 'POST', '/v1/accounts', token, { platform: 'telegram', name: 'b', credentials: { botToken }, maxSendPerMinute: 6000 });
  expect([httpAccount.status, botAccount.status]).toEqual([201, 201]);
  const runs: string[] = [];
  for (const [account, targets] of [
    [httpAccount.body.id, ['c1', 'c2', 'c3']],
    [botAccount.body.id, ['-1001', '-1002', '-1003']],
  ] as const) {
    const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
      accountId: account,
      name: 'echo',
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: 'hello' }],
      targets,
      active: false,
    });
    expect(campaign.status).toBe(201);
    runs.push((await api(stack, 'POST', `/v1/campaigns/${campaign.body.id}/runs`, token)).body.id);
  }
  const finished = await eventually(
    'both runs to end',
    async () => {
      const all = await Promise.all(runs.map(async (id) => (await api(stack, 'GET', `/v1/runs/${id}`, token)).body));
      return all.every((r) => !['queued', 'running'].includes(r.status)) ? all : null;
    },
    30_000,
    200,
  );
  expect(finished.map((r) => r.status)).toEqual(['failed', 'failed']);
  await eventually(
    'the failed runs to reach the event stream',
    async () => events.events.filter((e) => e.event === 'run' && e.data.status === 'failed').length === 2,
    10_000,
  );

  // The platforms really did echo the secrets, so their absence below means something.
  const rejections = await sandbox(stack, `/sandbox/rejections?account=${externalId}`);
  expect(JSON.stringify(rejections)).toContain(apiKey);
  expect(JSON.stringify(fake.refusals())).toContain(botToken);

  // stored
  const targets = await stack.db.db.selectFrom('run_targets').select(['run_id', 'error_code', 'error_message']).where('run_id', 'in', runs).execute();
  expect(targets).toHaveLength(6);
  for (const t of targets) expect(t.error_message).toContain('[redacted]');
  const stored = JSON.stringify({
    targets,
    runs: await stack.db.db.selectFrom('runs').select(['error_summary']).execute(),
    campaigns: await stack.db.db.selectFrom('campaigns').select(['last_error']).execute(),
  });
  // answered
  const answers: unknown[] = [];
  for (const id of runs) {
    answers.push((await api(stack, 'GET', `/v1/runs/${id}`, token)).body, (await api(stack, 'GET', `/v1/runs/${id}/targets`, token)).body);
  }
  answers.push(
    (await api(stack, 'GET', '/v1/runs', token)).body,
    (await api(stack, 'GET', '/v1/accounts', token)).body,
    (await api(stack, 'GET', '/v1/campaigns', token)).body,
  );
  const answered = JSON.stringify(answers);
  expect(answered).toContain('[redacted]');
  // logged: every line every service wrote (the senders at debug level)
  const logged = stack.services.flatMap((s) => s.output).join('\n');
  expect(logged).toContain('send failed');
  const streamed = JSON.stringify(events.events);

  const secrets = [apiKey, botToken, botToken.split(':')[1]!, encodeURIComponent(botToken)];
  for (const [where, text] of Object.entries({ stored, answered, logged, streamed })) {
    for (const secret of secrets) expect({ where, leaked: text.includes(secret) }).toEqual({ where, leaked: false });
  }
}, 90_000);
