import type { StillPending } from '@metronome/core';
import type { HealthWrite, RunProgress, SentSettlement } from '@metronome/db';
import type { JobDeps } from './deps.js';
import { durably, leaseLost, type LaneContext } from './lane-context.js';

/**
 * A delivered chat's `sent` rides on the job's next claim, whichever lane makes it (one
 * statement for both), when a claim comes within this long; otherwise it is written without
 * one, so an answer never waits out a pace interval in memory, where a crash would lose it.
 */
const ANSWER_MAX_HOLD_MS = 100;

/**
 * The job's delivered chats not yet written as `sent`. The next claim of any lane carries them
 * all in its statement; when none comes within ANSWER_MAX_HOLD_MS of the oldest (the next slot
 * is further, or the lanes have stopped), they go together in the sender's next claim
 * statement as a claim of no target (writeSent): an answer held in memory is one a crash would
 * lose.
 */
export class PendingAnswers {
  private readonly answers: SentSettlement[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly writes: Promise<unknown>[] = [];

  constructor(
    private readonly deps: JobDeps,
    private readonly ctx: LaneContext,
  ) {}

  add(...answers: SentSettlement[]): void {
    if (answers.length === 0) return;
    this.answers.push(...answers);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.writes.push(this.flush());
    }, ANSWER_MAX_HOLD_MS);
  }

  /** Every answer held, for a claim statement to carry (a claim whose answer is lost gives them back). */
  take(): SentSettlement[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return this.answers.splice(0);
  }

  /**
   * Once every lane has stopped: writes what is left and, with `count`, reads the run's counts
   * in the same statement (null when not read: the job reads them itself), carrying `health`
   * (`healthWritten`: it was written). Rethrows a write that failed for good.
   */
  async close(count: boolean, health: { accountId: string; write: HealthWrite } | null): Promise<{ progress: RunProgress | StillPending | null; healthWritten: boolean }> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const earlier = await Promise.allSettled(this.writes);
    const batch = this.answers.splice(0);
    let progress: RunProgress | StillPending | null = null;
    if (!count) {
      if (batch.length > 0) await writeSent(this.deps, this.ctx, batch);
    } else {
      const { run, token } = this.ctx;
      const write = () => this.deps.targets.settleSentAndCount(run.runId, token, batch, new Date(this.deps.clock.now()), health);
      // an answer is written through an outage; a count alone is not worth waiting for
      const result = batch.length > 0 ? await durably(this.deps, this.ctx, batch.map((d) => d.chatId), 'sent', write) : await write();
      for (const d of result ? batch : []) if (!result!.settled.has(d.chatId)) leaseLost(this.deps, this.ctx, d.chatId);
      progress = result?.progress ?? null;
    }
    const failed = earlier.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return { progress, healthWritten: health !== null && progress !== null };
  }

  private async flush(): Promise<void> {
    const batch = this.answers.splice(0);
    if (batch.length > 0) await writeSent(this.deps, this.ctx, batch);
  }
}

/**
 * Writes delivered chats as `sent`, through a database outage if need be. They go in the
 * sender's next claim statement as a claim of no target (limit 0), so they share its round
 * trip and commit with the claims of the sender's other jobs. As statements of their own they
 * came at the end of most jobs on a busy machine, the job's lanes stopped and their last
 * answers slow to come (687–1,044 such statements for 1,320 jobs in a `throughput` run;
 * docs/BENCHMARKS.md, "Where the machine's CPU goes during the sends").
 */
async function writeSent(deps: JobDeps, ctx: LaneContext, sent: SentSettlement[]): Promise<void> {
  const chatIds = sent.map((d) => d.chatId);
  const write = () => deps.claims.claim(true, { runId: ctx.run.runId, owner: ctx.token, sent, leaseMs: ctx.leaseMs, firstSendKnown: true, limit: 0 });
  const written = await durably(deps, ctx, chatIds, 'sent', write);
  if (!written) return;
  for (const d of sent) if (!written.settled.has(d.chatId)) leaseLost(deps, ctx, d.chatId);
}
