import { GroupCommit, type Clock } from '@metronome/core';
import { isTransientDbError, type CloseRequest, type CloseResult, type RunForSend, type RunRepository, type TargetSendRepository } from '@metronome/db';

type Answer<R> = { value: R } | { error: unknown };

/**
 * How many statements of one kind a sender has out at once: as its claim statements
 * (claim-statements.ts), two, so a burst of due runs never waits behind one.
 */
const STATEMENTS_OUT = 2;

/**
 * One statement for the requests of several of a sender's jobs (group commit, as its claims
 * share theirs in claim-statements.ts): a job's request goes out at once when fewer than
 * `maxOut` statements of this kind are out; jobs that ask while that many are out go together
 * in the next, one statement for all. A statement that fails for a reason that is not transient
 * is tried again once per request, each alone, so one run's bad row fails only its own job.
 */
export class SharedStatement<Q, R> {
  private readonly statements: GroupCommit<true, Answer<R>, { request: Q }>;

  /** `statement` answers its requests in order. */
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

  /** One job's request; rejects with its statement's error. */
  async ask(request: Q): Promise<R> {
    const answer = await this.statements.ask(true, { request });
    if ('error' in answer) throw answer.error;
    return answer.value;
  }
}

/**
 * The sender's run starts (queued → running, its suppressed chats skipped: markRunningMany),
 * each run stamped with the moment its own job asked (its account's lock taken); true when the
 * run started, false when it is no longer open.
 */
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

/**
 * The sender's jobs' last writes (settleSentAndCountMany): each job's deliveries left, its
 * account's health, its run's counts, and the finish of a run whose every target is then sent.
 */
export function jobCloses(
  targets: Pick<TargetSendRepository, 'settleSentAndCountMany'>,
  clock: Clock,
  maxOut?: number,
): SharedStatement<CloseRequest, CloseResult> {
  return new SharedStatement((closes) => targets.settleSentAndCountMany(closes, new Date(clock.now()), true), maxOut);
}
