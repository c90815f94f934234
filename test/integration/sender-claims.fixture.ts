import { sql, type Kysely, type RawBuilder } from 'kysely';
import { createDb, type ClaimRequest, type ClaimResult, type DB, type SentSettlement, type TargetSendRepository } from '@metronome/db';
import type { SenderHarness } from '../helpers/sender-harness.js';

// The helpers of the claim tests (sender-claims.test.ts, sender-claim-reads.test.ts): a
// running run, one job's claim statement, and a connection whose index reads are counted.

/** A delivery of `chatId` answered at `now`, as a job's claim carries it. */
export const sentAs = (chatId: string, now: number) => ({ chatId, at: new Date(now), latencyMs: 5, partsSent: 1, messageId: `m-${chatId}` });

/** A claim at `now`, leased a minute, not stamped as sending, for `limit` lanes. */
export const claimAt = (now: number, limit = 1) => ({ now: new Date(now), leaseUntil: new Date(now + 60_000), sending: false, firstSendKnown: false, limit });

/** One job's claim statement (settleSentAndClaimMany with one request). */
export async function settleSentAndClaim(
  targets: TargetSendRepository,
  runId: string,
  owner: string,
  sent: SentSettlement[],
  o: ReturnType<typeof claimAt>,
): Promise<ClaimResult> {
  const [result] = await targets.settleSentAndClaimMany(
    [{ runId, owner, sent, leaseUntil: o.leaseUntil, firstSendKnown: o.firstSendKnown, limit: o.limit }],
    o.now,
    o.sending,
  );
  return result!;
}

export type PlanWork = (
  db: Kysely<DB>,
  indexStat: (column: 'idx_scan' | 'idx_tup_read', indexes: RawBuilder<unknown>, table?: 'run_targets' | 'runs') => Promise<number>,
) => Promise<void>;

/** The helpers that need the test's harness (`harness()`: the one of the running test). */
export function claimHelpers(harness: () => SenderHarness) {
  async function runningRun(targets: string[]): Promise<string> {
    const { tenantId, accountId } = await harness().seedAccount();
    const runId = await harness().seedRun({ tenantId, accountId, targets, parts: [{ type: 'text', text: 'x' }] });
    await harness().deps.repo.runs.markRunning(runId, new Date(harness().clock.now()));
    return runId;
  }

  /**
   * The shared pool's backends (seeding, the harness) keep their index statistics pending for up
   * to 10 s after their last statement; read late, they would count as the measured work's reads.
   * One forced flush on each of its connections (all held at once, so each is a different one).
   */
  async function flushSharedPoolStats(): Promise<void> {
    await Promise.all(Array.from({ length: 5 }, () => sql`select pg_stat_force_next_flush(), pg_sleep(0.05)`.execute(harness().tdb.db)));
  }

  /**
   * Runs `work` on a connection of its own with the plan cache mode given (generic plans, as a
   * sender's statements may get after five calls; 'auto': PostgreSQL's own choice), and a reader of
   * PostgreSQL's index statistics for `run_targets` (or `runs`; `indexes`: a SQL condition on
   * `indexrelname`), flushed for that connection first.
   */
  async function withPlans(mode: 'auto' | 'force_generic_plan' | 'force_custom_plan', work: PlanWork): Promise<void> {
    const db = createDb({ url: harness().tdb.url, max: 1 });
    try {
      await sql`select set_config('plan_cache_mode', ${mode}, false)`.execute(db);
      await work(db, async (column, indexes, table = 'run_targets') => {
        await sql`select pg_stat_force_next_flush()`.execute(db);
        await flushSharedPoolStats();
        const row = await sql<{
          n: number;
        }>`select coalesce(sum(${sql.ref(column)}), 0)::int as n from pg_stat_user_indexes where relname = ${table} and ${indexes}`.execute(harness().tdb.db);
        return row.rows[0]!.n;
      });
    } finally {
      await db.destroy();
    }
  }

  /** One job's request in a claim statement of several. */
  const request = (runId: string, owner: string, limit: number, sent: ReturnType<typeof sentAs>[] = [], firstSendKnown = false): ClaimRequest => ({
    runId,
    owner,
    sent,
    leaseUntil: new Date(harness().clock.now() + 60_000),
    firstSendKnown,
    limit,
  });

  return { runningRun, withPlans, request };
}
