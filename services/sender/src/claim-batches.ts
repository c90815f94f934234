import { isTransientDbError, type ClaimedTarget } from '@metronome/db';
import type { JobDeps } from './deps.js';
import { leaseLost, stopWith, type LaneContext } from './lane-context.js';
import { GroupCommit } from './group-commit.js';
import type { PendingAnswers } from './pending-answers.js';

/** What a lane's claim came back with: a target, none due (the run is drained), or `lost` (the statement's answer was lost). */
export type LaneClaim = ClaimedTarget | null | 'lost';

/**
 * The job's claims, one at a time (group commit). A lane at its slot claims at once when no
 * claim of the job is out; lanes that reach their slots while one is out wait for it, then
 * claim together in the next: one claim takes a target for each of them and carries every
 * answer the job holds. Each claim of the job goes in the sender's next claim statement, which
 * its other jobs share (claim-statements.ts). At a pace of many sends a second, the lanes' slots are
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
  private readonly claims: GroupCommit<boolean, LaneClaim>;

  constructor(
    private readonly deps: JobDeps,
    private readonly ctx: LaneContext,
    private readonly answers: PendingAnswers,
  ) {
    this.claims = new GroupCommit(async (sending, lanes) => {
      const count = lanes.length;
      // after a claim whose answer was lost, no lane claims again in this job
      const claimed = this.ctx.claimLost ? 'lost' : await this.statement(count, sending);
      return Array.from({ length: count }, (_, i) => (claimed === 'lost' ? 'lost' : (claimed[i] ?? null)));
    });
  }

  /** Claims one due target for a lane at its slot; rejects on a database error that is not transient. */
  claim(sending: boolean): Promise<LaneClaim> {
    return this.claims.ask(sending);
  }

  /** The job's claim for `limit` lanes, carrying every answer held, in the sender's next claim statement. */
  private async statement(limit: number, sending: boolean): Promise<ClaimedTarget[] | 'lost'> {
    const { deps, ctx } = this;
    const carried = this.answers.take();
    let claim;
    try {
      claim = await deps.claims.claim(sending, { runId: ctx.run.runId, owner: ctx.token, sent: carried, leaseMs: ctx.leaseMs, firstSendKnown: ctx.run.firstSendAt !== null, limit });
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
    const now = claim.at;
    for (const target of claim.claimed) ctx.leases.set(target.chatId, now + ctx.leaseMs);
    if (claim.firstSend) {
      ctx.run.firstSendAt = new Date(now);
      deps.events.emit('run:first-send', { runId: ctx.run.runId, trigger: ctx.run.trigger, lagMs: now - ctx.run.scheduledAt.getTime() });
    }
    return claim.claimed;
  }
}
