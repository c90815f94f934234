import { GroupCommit, type Clock } from '@metronome/core';
import { isTransientDbError, type ClaimRequest, type ClaimResult, type TargetSendRepository } from '@metronome/db';

/** One job's claim: its run, lease owner, held answers and lanes waiting, and how long it leases. */
export type JobClaim = Omit<ClaimRequest, 'leaseUntil'> & { leaseMs: number };

/** What a job's claim came back with, and the moment its statement took (its claims' leases run from it). */
export type JobClaimed = ClaimResult & { at: number };

type Outcome = { claimed: JobClaimed } | { error: unknown };

/**
 * How many claim statements a sender has out at once. One makes the fewest statements and the
 * most sends per second, but the first claims of a burst of due runs all wait behind it; two
 * keep first runs on time (bench/results/HISTORY.md). On time first, then fast. Still few, so
 * that under load jobs wait for one and share the next.
 */
const STATEMENTS_OUT = 2;

/**
 * The sender's claim statements, shared by its concurrent jobs (group commit, as each job's
 * JobWrites does for its lanes): a job's claim goes out at once when fewer than
 * STATEMENTS_OUT claim statements of this sender are out; jobs that claim while that many are
 * out wait, then go together in the next, one statement for all (settleSentAndClaimMany).
 * Each job's writes stay fenced by its own lease owner, and each claims for its own run only.
 * A job's answers held too long for a claim to carry them go the same way, as a claim of no
 * target (JobWrites in writes.ts).
 * A statement and its commit cost PostgreSQL and this process far more than its rows do
 * (bench/micro/statement-cost.mjs), so jobs that share statements cost fewer per send.
 *
 * A statement that fails for a reason that is not transient is tried again once per job, each
 * alone, so one run's bad row fails only its own job, never the others it shared a statement with.
 * Claims that stamp their sends (`sending`) and claims that do not (typing first) are never mixed.
 */
export class ClaimStatements {
  private readonly statements: GroupCommit<boolean, Outcome, JobClaim>;

  constructor(
    private readonly targets: TargetSendRepository,
    private readonly clock: Clock,
    maxOut = STATEMENTS_OUT,
  ) {
    this.statements = new GroupCommit(async (sending, jobs) => {
      try {
        return (await this.statement(jobs, sending)).map((claimed) => ({ claimed }));
      } catch (error) {
        if (jobs.length === 1 || isTransientDbError(error)) return jobs.map(() => ({ error }));
        return Promise.all(
          jobs.map((j) =>
            this.statement([j], sending).then(
              ([claimed]) => ({ claimed: claimed! }),
              (error: unknown) => ({ error }),
            ),
          ),
        );
      }
    }, maxOut);
  }

  /** One job's claim; rejects with its statement's error. */
  async claim(sending: boolean, job: JobClaim): Promise<JobClaimed> {
    const outcome = await this.statements.ask(sending, job);
    if ('error' in outcome) throw outcome.error;
    return outcome.claimed;
  }

  private async statement(jobs: JobClaim[], sending: boolean): Promise<JobClaimed[]> {
    const at = this.clock.now();
    const requests = jobs.map(({ leaseMs, ...j }) => ({ ...j, leaseUntil: new Date(at + leaseMs) }));
    const results = await this.targets.settleSentAndClaimMany(requests, new Date(at), sending);
    return results.map((r) => ({ ...r, at }));
  }
}
