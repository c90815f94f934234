import type { Clock } from '@metronome/core';
import { isTransientDbError, type ClaimRequest, type ClaimResult, type TargetSendRepository } from '@metronome/db';
import { GroupCommit } from './group-commit.js';

/** One job's claim: its run, lease owner, held answers and lanes waiting, and how long it leases. */
export type JobClaim = Omit<ClaimRequest, 'leaseUntil'> & { leaseMs: number };

/** What a job's claim came back with, and the moment its statement took (its claims' leases run from it). */
export type JobClaimed = ClaimResult & { at: number };

type Outcome = { claimed: JobClaimed } | { error: unknown };

/**
 * The sender's claim statements, shared by its concurrent jobs (group commit, as each job's
 * ClaimBatches does for its lanes): a job's claim goes out at once when no claim statement of
 * this sender is out; jobs that claim while one is out wait for it, then go together in the
 * next, one statement for all (settleSentAndClaimMany). Each job's writes stay fenced by its
 * own lease owner, and each claims for its own run only. A statement costs PostgreSQL and this
 * process about as much for one run as for several: at full speed a sender's jobs claimed about
 * 2 targets per statement each, and now share it.
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
  ) {
    this.statements = new GroupCommit(async (sending, jobs) => {
      try {
        return (await this.statement(jobs, sending)).map((claimed) => ({ claimed }));
      } catch (error) {
        if (jobs.length === 1 || isTransientDbError(error)) return jobs.map(() => ({ error }));
        return Promise.all(jobs.map((j) => this.statement([j], sending).then(([claimed]) => ({ claimed: claimed! }), (error: unknown) => ({ error }))));
      }
    });
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
