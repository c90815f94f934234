import { startService, type ServiceProcess } from '@metronome/testkit';
import { received, senderEnvFor } from '../helpers/platform-record.js';
import { api, stackForFile } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// STOP_DEADLINE_MS: a sender granted a longer stop drains longer. A send whose platform answers
// 8 s after SIGTERM finishes by itself under a 20 s deadline (drain 14 s) and is recorded `sent`
// once; under the default 9 s (drain 3 s) its connection is closed under it: begun, it is `unknown`.
// No sender but the one under test runs, so the slow send is surely its own.

const HANG_MS = 8_000;
const stack = stackForFile({ senders: 0 });

interface StoppedSend {
  code: number | null;
  deadlineMs: unknown;
  closedUnder: boolean;
  target: { status: string; attempts: number } | undefined;
  platform: number;
}

/** One chat whose answer hangs HANG_MS, sent by a sender of `env` that gets SIGTERM while it waits. */
async function slowSendStopped(name: string, env: Record<string, string>): Promise<StoppedSend> {
  const tenant = await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name });
  const account = `stop-deadline-${name}`;
  const acc = await api(stack, 'POST', '/v1/accounts', tenant.body.token, {
    platform: 'http',
    credentials: { apiKey: 'sandbox-api-key-0001' },
    name,
    externalId: account,
    maxSendPerMinute: 6000,
  });
  expect(acc.status).toBe(201);
  const hang = await fetch(`${stack.sandboxUrl}/sandbox/chats/${account}/chat-slow`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ hangNextMs: HANG_MS }),
  });
  expect(hang.status).toBe(200);
  const sender: ServiceProcess = startService(`sender-${name}`, 'services/sender/dist/main.js', senderEnvFor(stack, env));
  try {
    await sender.waitForLog((l) => l['msg'] === 'sender ready');
    const campaign = await api(stack, 'POST', '/v1/campaigns', tenant.body.token, {
      accountId: acc.body.id,
      name,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: 'slow' }],
      targets: ['chat-slow'],
      active: false,
    });
    expect(campaign.status).toBe(201);
    const run = await api(stack, 'POST', `/v1/campaigns/${campaign.body.id}/runs`, tenant.body.token);
    expect(run.status).toBe(201);
    // the platform has the message and holds its answer: the send is waiting
    await eventually('the platform to hold the send', async () => (await received(stack, account)).length === 1, 30_000, 50);
    const code = await sender.stop('SIGTERM');
    const lines = sender.output.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
    const target = await stack.db.db.selectFrom('run_targets').select(['status', 'attempts']).where('run_id', '=', run.body.id).executeTakeFirst();
    return {
      code,
      deadlineMs: lines.find((l) => typeof l['signal'] === 'string')?.['deadlineMs'],
      closedUnder: lines.some((l) => String(l['msg']).startsWith('sends still waiting')),
      target,
      platform: (await received(stack, account)).length,
    };
  } finally {
    await sender.stop('SIGKILL');
  }
}

test('STOP_DEADLINE_MS=20000: a send answered 8 s after SIGTERM finishes by itself and is recorded sent, once', async () => {
  const stopped = await slowSendStopped('long', { STOP_DEADLINE_MS: '20000' });
  expect(stopped).toEqual({ code: 0, deadlineMs: 20_000, closedUnder: false, target: { status: 'sent', attempts: 1 }, platform: 1 });
}, 60_000);

test('the default 9 s: the same send has its connection closed under it after the 3 s drain and ends unknown', async () => {
  const stopped = await slowSendStopped('default', {});
  expect(stopped).toEqual({ code: 0, deadlineMs: 9_000, closedUnder: true, target: { status: 'unknown', attempts: 1 }, platform: 1 });
}, 60_000);
