import { isTransientDbError, type ClaimedTarget } from '@metronome/db';
import type { JobDeps } from './deps.js';
import { leaseLost, stopWith, type LaneContext } from './lane-context.js';
import type { PendingAnswers } from './pending-answers.js';

/** What a lane's claim came back with: a target, none due (the run is drained), or `lost` (the statement's answer was lost). */
export type LaneClaim = ClaimedTarget | null | 'lost';

interface Waiter {
  sending: boolean;
  resolve: (claim: LaneClaim) => void;
  reject: (error: unknown) => void;
}

/**
 * The job's claims, one statement at a time (group commit). A lane at its slot claims at once
 * when no claim statement of the job is out; lanes that reach their slots while one is out wait
 * for it, then claim together in the next: one statement takes a target for each of them and
 * carries every answer the job holds. At a pace of many sends a second, the lanes' slots are
 * a millisecond apart and a statement takes longer than that, so several lanes share each
 * statement; at a slow pace every lane claims alone, as before. No lane claims before its slot,
 * and a lane waits at most one statement longer than it would alone. Each claimed target still
 * belongs to one lane, which writes its request at once (spaceWrite keeps requests that a
 * batch released together one configured interval apart), so a crash leaves at most one
 * `unknown` per lane, as before.
 *
 * Claims that stamp their sends (`sending`) and claims that do not (typing first) are never
 * mixed in one statement.
 */
export class ClaimBatches {
  private waiting: Waiter[] = [];
  private busy = false;

  constructor(
    private readonly deps: JobDeps,
    private readonly ctx: LaneContext,
    private readonly answers: PendingAnswers,
  ) {}

  /** Claims one due target for a lane at its slot; rejects on a database error that is not transient. */
  claim(sending: boolean): Promise<LaneClaim> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ sending, resolve, reject });
      if (!this.busy) void this.next();
    });
  }

  private async next(): Promise<void> {
    this.busy = true;
    while (this.waiting.length > 0) {
      const sending = this.waiting[0]!.sending;
      const batch = this.waiting.filter((w) => w.sending === sending);
      this.waiting = this.waiting.filter((w) => w.sending !== sending);
      try {
        // after a claim whose answer was lost, no lane claims again in this job
        const claimed = this.ctx.claimLost ? 'lost' : await this.statement(batch.length, sending);
        batch.forEach((w, i) => w.resolve(claimed === 'lost' ? 'lost' : (claimed[i] ?? null)));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.busy = false;
  }

  /** One claim statement for `limit` lanes, carrying every answer held. */
  private async statement(limit: number, sending: boolean): Promise<ClaimedTarget[] | 'lost'> {
    const { deps, ctx } = this;
    const carried = this.answers.take();
    const now = deps.clock.now();
    let claim;
    try {
      claim = await deps.targets.settleSentAndClaim(ctx.run.runId, ctx.token, carried, {
        now: new Date(now),
        leaseUntil: new Date(now + ctx.leaseMs),
        sending,
        firstSendKnown: ctx.run.firstSendAt !== null,
        limit,
      });
    } catch (error) {
      if (!isTransientDbError(error)) throw error;
      // The claim may have committed (see runLanes); its answers wait for the job's last write.
      this.answers.add(...carried);
      stopWith(ctx.report, 'storage');
      ctx.claimLost = true;
      deps.events.emit('claim:lost', { runId: ctx.run.runId, error });
      return 'lost';
    }
    for (const d of carried) if (!claim.settled.has(d.chatId)) leaseLost(deps, ctx, d.chatId);
    for (const target of claim.claimed) ctx.leases.set(target.chatId, now + ctx.leaseMs);
    if (claim.firstSend) {
      ctx.run.firstSendAt = new Date(now);
      deps.events.emit('run:first-send', { runId: ctx.run.runId, trigger: ctx.run.trigger, lagMs: now - ctx.run.scheduledAt.getTime() });
    }
    return claim.claimed;
  }
}
