import { GroupCommit, type Clock } from '@metronome/core';
import { isTransientDbError, type RunRepository } from '@metronome/db';

type Started = { started: boolean } | { error: unknown };

/**
 * How many start statements a sender has out at once: as its claim statements
 * (claim-statements.ts), two, so a burst of due runs never waits behind one.
 */
const STATEMENTS_OUT = 2;

/**
 * The sender's run starts (queued → running, its suppressed chats skipped: markRunning), shared
 * by its concurrent jobs as their claims are (group commit): a job's start goes out at once when
 * fewer than STATEMENTS_OUT are out; jobs that start while that many are out go together in the
 * next, one statement for all (markRunningMany), each run stamped with the moment its own job
 * asked (its account's lock taken). A statement that fails for a reason that is not transient is
 * tried again once per run, each alone, so one run's bad row fails only its own job.
 */
export class RunStarts {
  private readonly statements: GroupCommit<true, Started, { runId: string; at: Date }>;

  constructor(
    private readonly runs: Pick<RunRepository, 'markRunningMany'>,
    private readonly clock: Clock,
    maxOut = STATEMENTS_OUT,
  ) {
    this.statements = new GroupCommit(async (_, starts) => {
      try {
        const started = await this.statement(starts);
        return starts.map((s) => ({ started: started.has(s.runId) }));
      } catch (error) {
        if (starts.length === 1 || isTransientDbError(error)) return starts.map(() => ({ error }));
        return Promise.all(
          starts.map((s) =>
            this.statement([s]).then(
              (started) => ({ started: started.has(s.runId) }),
              (e: unknown) => ({ error: e }),
            ),
          ),
        );
      }
    }, maxOut);
  }

  /** Starts the run (started_at `at` unless it has one); false when it is no longer open. Rejects with its statement's error. */
  async start(runId: string, at: Date): Promise<boolean> {
    const outcome = await this.statements.ask(true, { runId, at });
    if ('error' in outcome) throw outcome.error;
    return outcome.started;
  }

  private statement(starts: { runId: string; at: Date }[]): Promise<Set<string>> {
    return this.runs.markRunningMany(starts, new Date(this.clock.now()));
  }
}
