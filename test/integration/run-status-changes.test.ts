import { RUN_STATUSES, type RunStatusName } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { DB } from '@metronome/db';
import {
  cancelRun,
  demoteRun,
  expirePausedRun,
  finishRun,
  pauseRun,
  resumeRun,
  retryRun,
  startRun,
  type RunStatusChange,
} from '../../libs/db/src/repositories/run-status.js';
import { seedCampaignOfNewAccount, seedRun } from '../helpers/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// Each change of a run's status (libs/db run-status.ts) against real PostgreSQL: a run in every
// status, the change applied to all of them at once; only the runs in the statuses it may start
// from move, and each to the status it names.

let database: TestDatabase;
let db: Kysely<DB>;
beforeAll(async () => {
  database = await createTestDatabase('run_status');
  db = database.db;
});
afterAll(() => database.drop());

const now = new Date();
const changes: Record<string, { change: RunStatusChange; from: RunStatusName[]; to: RunStatusName }> = {
  start: { change: startRun(now), from: ['queued', 'running'], to: 'running' },
  finish: { change: finishRun('partial', 'two chats unknown', now), from: ['queued', 'running'], to: 'partial' },
  pause: { change: pauseRun('window_closed', 'window closed', now), from: ['queued', 'running'], to: 'paused' },
  cancel: { change: cancelRun(now), from: ['queued', 'running', 'paused'], to: 'cancelled' },
  expire: { change: expirePausedRun(now), from: ['paused'], to: 'cancelled' },
  resume: { change: resumeRun(null, now), from: ['paused'], to: 'queued' },
  retry: { change: retryRun(null, now), from: ['success', 'partial', 'failed', 'cancelled'], to: 'queued' },
  demote: { change: demoteRun(now), from: ['success'], to: 'partial' },
};

test.each(Object.keys(changes))('%s moves a run only from the statuses it may start from', async (name) => {
  const { change, from, to } = changes[name]!;
  const seeded = await seedCampaignOfNewAccount(db, { campaign: { targets: ['a'] } });
  const statusOf = new Map<string, RunStatusName>();
  for (const [i, status] of RUN_STATUSES.entries()) {
    const id = await seedRun(db, { ...seeded, parts: [{ type: 'text', text: 'hi' }], scheduledAt: new Date(now.getTime() + i * 60_000) });
    // test runs: a campaign may hold both a queued and a running one (runs_one_open_per_campaign)
    await db.updateTable('runs').set({ status, trigger: 'test' }).where('id', '=', id).execute();
    statusOf.set(id, status);
  }
  const moved = await sql<{ id: string; status: RunStatusName }>`
    update runs r set ${change.set} where r.campaign_id = ${seeded.campaignId}::uuid and ${change.from} returning r.id, r.status`.execute(db);
  expect(moved.rows.map((r) => statusOf.get(r.id)).sort()).toEqual([...from].sort());
  expect(moved.rows.every((r) => r.status === to)).toBe(true);
});
