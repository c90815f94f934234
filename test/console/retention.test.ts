import { randomUUID } from 'node:crypto';
import { scrapeSum } from '@metronome/testkit';
import { sql } from 'kysely';
import { received } from '../helpers/platform-record.js';
import { api } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';
import { account, campaign, consoleSuite, open, runNow, runStatus, tenant } from './console-kit.js';

// History retention and the chat erase with every process running: the scheduler sweeps with
// HISTORY_RETENTION=2m every 200 ms. A run that really went through a sender and the sandbox
// is aged (its finished_at moved 3 minutes back, as time would have) rather than waited for:
// the sweep reads the real clock. The console then shows the run's summary without its chats.

const suite = consoleSuite({ senders: 1, schedulerEnv: { HISTORY_RETENTION: '2m', RETENTION_SWEEP_MS: '200', RETENTION_PAUSE_MS: '0' } });
const db = () => suite.stack.db.db;
let token: string;
let campaignId: string;

beforeAll(async () => {
  token = await tenant(suite, 'Kept short');
  const accountId = await account(suite, token, 'retention-a', 6000);
  campaignId = await campaign(suite, token, { accountId, name: 'Weekly', targets: ['keep-1', 'keep-2'] });
});

/** Runs the campaign now and waits for the run to finish; its id. */
async function runToEnd(): Promise<string> {
  const id = await runNow(suite, token, campaignId);
  await eventually(`run ${id} to finish`, async () => ['success', 'partial', 'failed'].includes(await runStatus(suite, token, id)), 20_000, 50);
  return id;
}

const chatsOf = async (runId: string) =>
  (await api(suite.stack, 'GET', `/v1/runs/${runId}/targets`, token)).body.items.map((t: { chatId: string }) => t.chatId);

test('a finished run past HISTORY_RETENTION loses its chats and events, keeps its summary; fresh, open and paused runs are untouched', async () => {
  const aged = await runToEnd();
  const fresh = await runToEnd();
  expect([await runStatus(suite, token, aged), await runStatus(suite, token, fresh)]).toEqual(['success', 'success']);
  // a paused run whose finished_at is old (left from before a retry): its status keeps the sweep away
  const paused = randomUUID();
  await sql`insert into runs (id, campaign_id, tenant_id, account_id, trigger, status, parts, total, scheduled_at, finished_at, paused_reason, created_at)
    select ${paused}::uuid, c.id, c.tenant_id, c.account_id, 'manual', 'paused', c.messages, 1, now() - interval '1 hour', now() - interval '1 hour', 'operator', now() - interval '1 hour'
      from campaigns c where c.id = ${campaignId}::uuid`.execute(db());
  await sql`insert into run_targets (run_id, chat_id) values (${paused}::uuid, 'paused-chat')`.execute(db());
  await sql`update runs set finished_at = now() - interval '3 minutes' where id = ${aged}::uuid`.execute(db());

  const summary = await eventually(
    'the aged run to become a summary',
    async () => {
      const run = (await api(suite.stack, 'GET', `/v1/runs/${aged}`, token)).body;
      return run.historyPurgedAt ? run : null;
    },
    15_000,
    100,
  );
  expect(summary).toMatchObject({ status: 'success', counts: { total: 2, sent: 2, failed: 0 }, finishedAt: expect.any(String), startedAt: expect.any(String) });
  expect(await chatsOf(aged)).toEqual([]);
  const left = await sql<{ targets: number; events: number }>`
    select (select count(*) from run_targets where run_id = ${aged}::uuid)::int as targets, (select count(*) from run_events where run_id = ${aged}::uuid)::int as events`.execute(
    db(),
  );
  expect(left.rows[0]).toEqual({ targets: 0, events: 0 });
  // a few sweeps later the others are as they were
  const sweeps = async () => scrapeSum(`http://127.0.0.1:${suite.stack.schedulerMetricsPort}/metrics`, 'metronome_retention_sweeps_total', 'result="ok"');
  const after = await sweeps();
  await eventually('three more sweeps', async () => (await sweeps()) >= after + 3, 10_000, 100);
  expect((await chatsOf(fresh)).sort()).toEqual(['keep-1', 'keep-2']);
  expect(await chatsOf(paused)).toEqual(['paused-chat']);
  expect((await api(suite.stack, 'GET', `/v1/runs/${paused}`, token)).body).toMatchObject({ status: 'paused', historyPurgedAt: null });
  expect(await scrapeSum(`http://127.0.0.1:${suite.stack.schedulerMetricsPort}/metrics`, 'metronome_retention_deleted_rows_total', 'kind="targets"')).toBe(2);

  // the console: the summary without its chats; the fresh run still lists them
  const page = await open(suite, token, `#/runs/${aged}`);
  await page.locator('[data-history-purged]').waitFor();
  await page.getByRole('heading', { name: /Weekly/ }).waitFor();
  expect(await page.locator('table.targets tbody tr').count()).toBe(0);
  expect(await page.locator('body').innerText()).not.toContain('keep-1');
  await page.evaluate(`location.hash = ${JSON.stringify(`#/runs/${fresh}`)}`);
  await page.getByRole('cell', { name: 'keep-1' }).waitFor();
  expect(await page.locator('[data-history-purged]').count()).toBe(0);
  await page.context().close();
  await api(suite.stack, 'POST', `/v1/runs/${paused}/cancel`, token);
}, 60_000);

test('an erased chat is never sent to again, even when an operator adds it back', async () => {
  const erased = await api(suite.stack, 'POST', '/v1/chats/erase', token, { chatId: 'keep-1' });
  expect(erased.status).toBe(200);
  expect((await api(suite.stack, 'GET', `/v1/campaigns/${campaignId}`, token)).body.targets).toEqual(['keep-2']);
  expect((await api(suite.stack, 'PATCH', `/v1/campaigns/${campaignId}`, token, { targets: ['keep-1', 'keep-2'] })).status).toBe(200);
  const before = (await received(suite.stack)).length;
  const run = await runToEnd();
  const sent = (await received(suite.stack)).slice(before).map((m) => m.chatId);
  expect(sent).toEqual(['keep-2']);
  const targets = (await api(suite.stack, 'GET', `/v1/runs/${run}/targets`, token)).body.items;
  const status = await runStatus(suite, token, run);
  expect(status).not.toBe('failed');
  expect(targets).toEqual([
    expect.objectContaining({ chatId: 'keep-1', status: 'skipped', error: expect.objectContaining({ code: 'suppressed' }) }),
    expect.objectContaining({ chatId: 'keep-2', status: 'sent' }),
  ]);
}, 60_000);
