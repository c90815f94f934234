import { randomBytes } from 'node:crypto';
import type { FakeTelegramBotApi } from '../helpers/fake-telegram-bot-api.js';
import { driveRun, type SenderHarness } from '../helpers/sender-harness.js';
import { startTelegramHarness } from '../helpers/telegram-harness.js';

// Personal messages on Telegram, driven by the real sender job against the fake Bot API: each
// chat's text is rendered from the run's copy of its variables, and a chat the platform moves
// to a new id keeps its variables, in the run and in the campaign.

let fake: FakeTelegramBotApi;
let h: SenderHarness;
beforeAll(async () => {
  ({ fake, h } = await startTelegramHarness({ chatPacePerMinute: { telegram: 20 }, maxRetries: 3 }));
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

test('each chat gets its own text; a chat moved to a new id keeps its variables in the run and the campaign', async () => {
  const botId = '700001';
  const token = `${botId}:${randomBytes(24).toString('base64url')}`;
  fake.addBot(token);
  const bot = await h.seedAccount({ platform: 'telegram', externalId: botId, credentials: { botToken: token } });
  const kept = '-1002000001';
  const old = '-4101';
  const moved = '-1004101';
  const vars = { [kept]: { name: 'Ann' }, [old]: { name: 'Bo' } };
  const runId = await h.seedRun({
    tenantId: bot.tenantId,
    accountId: bot.accountId,
    targets: [kept, old],
    parts: [
      { type: 'text', text: 'Dear {{name}}' },
      { type: 'text', text: 'Bye {{name}}' },
    ],
  });
  // what the API and the scheduler store for targets given with variables (test/api covers that path)
  const { campaign_id: campaignId } = await h.tdb.db.selectFrom('runs').select('campaign_id').where('id', '=', runId).executeTakeFirstOrThrow();
  await h.tdb.db
    .updateTable('campaigns')
    .set({ target_vars: JSON.stringify(vars) })
    .where('id', '=', campaignId)
    .execute();
  for (const [chat, v] of Object.entries(vars)) {
    await h.tdb.db
      .updateTable('run_targets')
      .set({ vars: JSON.stringify(v) })
      .where('run_id', '=', runId)
      .where('chat_id', '=', chat)
      .execute();
  }
  fake.migrateChat(token, old, moved);

  await driveRun(h, runId);
  expect((await h.run(runId)).status).toBe('success');
  expect(fake.messages({ token, chatId: kept }).map((m) => m.text)).toEqual(['Dear Ann', 'Bye Ann']);
  expect(fake.messages({ token, chatId: moved }).map((m) => m.text)).toEqual(['Dear Bo', 'Bye Bo']);
  const campaign = await h.tdb.db.selectFrom('campaigns').select(['targets', 'target_vars']).where('id', '=', campaignId).executeTakeFirstOrThrow();
  expect(campaign).toEqual({ targets: [kept, moved], target_vars: { [kept]: { name: 'Ann' }, [moved]: { name: 'Bo' } } });
});
