import { sql, type Kysely } from 'kysely';
import { ManualClock } from '@metronome/core';
import { ScheduleRepository, type DB } from '@metronome/db';
import { countDbStatements, createLogger, Metrics } from '@metronome/observability';
import type { RunQueue } from '@metronome/queue';
import { runTick } from '../../services/scheduler/src/tick.js';
import { schedulerTestbed, type SchedulerTestbed } from '../helpers/scheduler-testbed.js';
import type { TestDatabase } from '../helpers/test-env.js';

// A tick costs a constant number of statements, whatever the number of due campaigns: counted
// on the real database with the same Kysely plugin the scheduler's metric uses.

let bed: SchedulerTestbed;
let tdb: TestDatabase;
let queue: RunQueue;
const T0 = Date.parse('2026-06-01T09:00:00Z');

// the testbed's database and queue; the tick here gets its own counting deps
beforeEach(async () => {
  bed = await schedulerTestbed('cost', T0);
  ({ tdb, queue } = bed);
});
afterEach(() => bed.close());

/** `n` due interval campaigns with 5 chats each, each on its own account, in three statements. */
async function seed(db: Kysely<DB>, n: number, accountStatus: 'active' | 'disabled' = 'active'): Promise<void> {
  await sql`insert into tenants (name, token_hash) values ('t', md5(random()::text)) on conflict do nothing`.execute(db);
  await sql`
    insert into accounts (tenant_id, platform, name, external_id, status)
    select (select id from tenants limit 1), 'http', 'a' || g, 'x' || g || '-' || md5(random()::text), ${accountStatus} from generate_series(1, ${n}) g
  `.execute(db);
  await sql`
    insert into campaigns (tenant_id, account_id, name, timezone, schedule, messages, targets, next_run_at)
    select a.tenant_id, a.id, 'c', 'UTC', '{"type":"interval","everySeconds":60}', '[{"type":"text","text":"hi"}]',
      array['c1','c2','c3','c4','c5'], ${new Date(T0)}
    from accounts a where a.status = ${accountStatus}
  `.execute(db);
}

async function statementsOfOneTick(due: number): Promise<{ statements: number; created: number }> {
  await seed(tdb.db, due);
  await seed(tdb.db, 3, 'disabled');
  let statements = 0;
  const db = countDbStatements(tdb.db, () => statements++);
  const repo = new ScheduleRepository(db);
  const clock = new ManualClock(T0);
  const fence = await repo.takeFence('me', new Date(T0));
  statements = 0;
  const result = await runTick(
    { repo, queue, clock, logger: createLogger('test', 'silent'), metrics: new Metrics('test'), batch: 2000, jitterMs: 0, lookaheadMs: 0 },
    fence,
  );
  return { statements, created: result.created };
}

test('10 or 1,000 due campaigns: the same number of statements per tick', async () => {
  const small = await statementsOfOneTick(10);
  expect(small.created).toBe(10);
  await sql`truncate campaigns, runs, run_targets, accounts, tenants cascade`.execute(tdb.db);
  const large = await statementsOfOneTick(1000);
  expect(large.created).toBe(1000);
  expect(large.statements).toBe(small.statements);
  // fence check, paused-run scan, due scan, runs with their targets and the campaigns' advance,
  // no-account scan, streaks (the automatic-resume update is skipped when there is nothing to resume)
  expect(large.statements).toBe(6);
  const targets = await tdb.db
    .selectFrom('run_targets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  expect(Number(targets.n)).toBe(5000);
}, 60_000);
