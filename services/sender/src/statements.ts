import { GroupCommit, type Clock } from '@metronome/core';
import {
  isTransientDbError,
  type ClaimRequest,
  type ClaimResult,
  type CloseRequest,
  type CloseResult,
  type PartWrite,
  type RunForSend,
  type RunRepository,
  type TargetSendRepository,
} from '@metronome/db';

// The statements a sender's concurrent jobs share (group commit): their claims, run loads, starts, part writes and last writes.

/** One job's claim: its run, lease owner, held answers and lanes waiting, and how long it leases. */
export type JobClaim = Omit<ClaimRequest, 'leaseUntil'> & { leaseMs: number };

/** What a job's claim came back with, and the moment its statement took (its claims' leases run from it). */
export type JobClaimed = ClaimResult & { at: number };

type Outcome = { claimed: JobClaimed } | { error: unknown };

/** How many claim statements a sender has out at once. */
const STATEMENTS_OUT = 2;

/** The sender's claim statements: a job's claim goes at once when fewer than STATEMENTS_OUT are out, else with the others in the next. */
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

type Answer<R> = { value: R } | { error: unknown };

/** One statement for the requests of several of a sender's jobs, as the claims share theirs. */
export class SharedStatement<Q, R> {
  private readonly statements: GroupCommit<true, Answer<R>, { request: Q }>;

  constructor(statement: (requests: Q[]) => Promise<R[]>, maxOut = STATEMENTS_OUT) {
    this.statements = new GroupCommit(async (_, asked): Promise<Answer<R>[]> => {
      const requests = asked.map((a) => a.request);
      try {
        return (await statement(requests)).map((value) => ({ value }));
      } catch (error) {
        if (requests.length === 1 || isTransientDbError(error)) return requests.map(() => ({ error }));
        return Promise.all(
          requests.map((r) =>
            statement([r]).then(
              ([value]) => ({ value: value as R }),
              (e: unknown) => ({ error: e }),
            ),
          ),
        );
      }
    }, maxOut);
  }

  async ask(request: Q): Promise<R> {
    const answer = await this.statements.ask(true, { request });
    if ('error' in answer) throw answer.error;
    return answer.value;
  }
}

/** The sender's run starts (queued → running, stamped when its own job asked); false when the run is no longer open. */
export function runStarts(runs: Pick<RunRepository, 'markRunningMany'>, clock: Clock, maxOut?: number): SharedStatement<{ runId: string; at: Date }, boolean> {
  return new SharedStatement(async (starts) => {
    const started = await runs.markRunningMany(starts, new Date(clock.now()));
    return starts.map((s) => started.has(s.runId));
  }, maxOut);
}

/** The sender's job loads: each job's run with its earliest `dueLimit` due times (loadRunMany); null when the run is gone. */
export function runLoads(runs: Pick<RunRepository, 'loadRunMany'>, dueLimit: number, maxOut?: number): SharedStatement<string, RunForSend | null> {
  return new SharedStatement((runIds) => runs.loadRunMany(runIds, dueLimit), maxOut);
}

/** The sender's jobs' last writes: deliveries left, the account's health, the run's counts, the finish of a run fully sent. */
export function jobCloses(
  targets: Pick<TargetSendRepository, 'settleSentAndCountMany'>,
  clock: Clock,
  maxOut?: number,
): SharedStatement<CloseRequest, CloseResult> {
  return new SharedStatement((closes) => targets.settleSentAndCountMany(closes, new Date(clock.now()), true), maxOut);
}

/** The sender's jobs' part writes: sends stamped as begun or waiting again, delivered parts; false when the lease was lost. */
export function partWrites(targets: Pick<TargetSendRepository, 'writePartsMany'>, clock: Clock, maxOut?: number): SharedStatement<PartWrite, boolean> {
  return new SharedStatement((writes) => targets.writePartsMany(writes, new Date(clock.now())), maxOut);
}
