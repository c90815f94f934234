import {
  RESTRICTING_CODES,
  restrictionWords,
  accountAdvice,
  COOLING_RESTRICTED,
  coolingWords,
  cannotSendReasonOf,
  decideSendOutcome,
  GroupCommit,
  OUTCOME_FAILED,
  OUTCOME_SENT,
  type SendResult,
  type StillPending,
  targetKey,
} from '@metronome/core';
import {
  isTransientDbError,
  type ClaimedTarget,
  type HealthWrite,
  type RunForSend,
  type RunProgress,
  type SentSettlement,
  type TargetRef,
  type TargetSettlement,
} from '@metronome/db';
import type { JobDeps } from './deps.js';
import type { JobStop } from './job-pace.js';

// Every write of one job to its targets, behind one object: the claim, the stamp of a send as begun, the delivery
// (`sent`), the settlement of one part's answer, and the close.

/** What a lane's claim came back with: a target, none due (the run is drained), or `lost` (the statement's answer, or the account lock, was). */
export type LaneClaim = ClaimedTarget | null | 'lost';

/** What follows one part's answer: the chat's next part, the chat's end for this job, or its `sent` to write. */
export type PartNext = 'next-part' | 'stop' | SentSettlement;

/** What the answers of one job were, for its end (cooling counts flood waits and outcomes). */
export interface AnswerTally {
  delivered: number;
  attempts: number;
  floodWaits: number[];
  /** one letter per chat finished, delivered (s) or failed for good (f) */
  outcomes: string;
  blockedUntil: number;
}

/** A delivered chat's `sent` rides on the job's next claim within this long, else it is written alone. */
const ANSWER_MAX_HOLD_MS = 100;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;

/** What the writes read of the job: its run, lease owner and lease length, and its stop (a write that fails stops the lanes). */
interface WritesJob {
  run: RunForSend;
  token: string;
  leaseMs: number;
  stop: JobStop;
}

export class JobWrites {
  /** lease end of each target this job claimed, by target key (an answer is retried until then) */
  private readonly leases = new Map<string, number>();
  /** a claim statement failed without an answer: it may have claimed a target no lane holds */
  private claimLost = false;
  /** targets (keys) whose requests were written and whose answers could not be recorded in time */
  private readonly unrecorded: string[] = [];
  private answers: SentSettlement[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly flushes: Promise<unknown>[] = [];
  private readonly claims: GroupCommit<boolean, LaneClaim>;
  private readonly answered: AnswerTally = { delivered: 0, attempts: 0, floodWaits: [], outcomes: '', blockedUntil: 0 };

  constructor(
    private readonly deps: JobDeps,
    private readonly job: WritesJob,
  ) {
    this.claims = new GroupCommit(async (sending, lanes) => {
      // after a claim whose answer was lost, no lane claims again in this job
      const claimed = this.claimLost ? 'lost' : await this.claimStatement(lanes.length, sending);
      return lanes.map((_, i) => (claimed === 'lost' ? 'lost' : (claimed[i] ?? null)));
    });
  }

  /** Claims one due target for a lane at its slot; rejects on a database error that is not transient. */
  claim(sending: boolean): Promise<LaneClaim> {
    return this.claims.ask(sending);
  }

  /** Holds a delivered chat's `sent` for the next claim, or writes it alone after its hold (ANSWER_MAX_HOLD_MS). */
  delivered(answer: SentSettlement): void {
    this.answers.push(answer);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.flushes.push(this.writeSent(this.takeAnswers()));
    }, this.deps.settings.answerHoldMs ?? ANSWER_MAX_HOLD_MS);
  }

  async markWaiting(target: TargetRef): Promise<boolean> {
    const { run, token } = this.job;
    return (await this.durably([keyOf(target)], 'waiting', () => this.deps.parts.ask({ runId: run.runId, target, owner: token, startedAt: null }))) === true;
  }

  /** Stamps a held target's send as begun, right before its request ('lost': the lease was; 'failed': the caller gives it back). */
  async stamp(target: TargetRef): Promise<'stamped' | 'lost' | 'failed'> {
    const { deps, job } = this;
    const { run, token } = job;
    const now = deps.clock.now();
    const at = new Date(now);
    const firstKnown = run.firstSendAt !== null;
    const stamped = await this.durably([keyOf(target)], 'stamp', () =>
      firstKnown
        ? deps.parts.ask({ runId: run.runId, target, owner: token, startedAt: at }).then((owned) => ({ owned, firstSend: false }))
        : deps.targets.markTypedSending(run.runId, target, token, at, false),
    );
    if (stamped === undefined) return 'failed';
    if (!stamped.owned) {
      job.stop.with('lock-lost');
      return 'lost';
    }
    if (stamped.firstSend) this.firstSent(now);
    return 'stamped';
  }

  tally(): AnswerTally {
    return { ...this.answered, floodWaits: [...this.answered.floodWaits] };
  }

  async release(target: TargetRef, nextAttemptAt: number, code: string | null = null): Promise<void> {
    await this.settle(target, { status: 'pending', nextAttemptAt: new Date(nextAttemptAt), countAttempt: false, errorCode: code, errorMessage: null });
  }

  /** The job's last write once every lane stopped: the deliveries left, the run's counts, `health`, and the finish of a run fully sent. */
  async close(
    health: { accountId: string; write: HealthWrite } | null,
  ): Promise<{ progress: RunProgress | StillPending | null; healthWritten: boolean; finished: boolean }> {
    const { deps, job } = this;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const earlier = await Promise.allSettled(this.flushes);
    const failed = earlier.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const batch = this.takeAnswers();
    let progress: RunProgress | StillPending | null = null;
    let finished = false;
    if (this.claimLost) {
      if (batch.length > 0) await this.writeSent(batch);
      if (failed) throw failed.reason;
      // every lane has stopped and every answer is written: what this job still holds was never sent
      const released = await this.durably([], 'release', () =>
        deps.targets.releaseClaims(job.run.runId, job.token, this.unrecorded, new Date(deps.clock.now())),
      );
      if (released) deps.events.emit('claim:released', { runId: job.run.runId, released });
    } else {
      const write = () => deps.closes.ask({ runId: job.run.runId, owner: job.token, sent: batch, health });
      // an answer is written through an outage; a count alone is not worth waiting for
      const chatIds = batch.map(keyOf);
      const result = batch.length > 0 ? await this.durably(chatIds, 'sent', write) : await write();
      if (result) this.checkSettled(batch, result.settled);
      progress = result?.progress ?? null;
      finished = result?.finished ?? false;
    }
    if (failed) throw failed.reason;
    return { progress, healthWritten: health !== null && progress !== null, finished };
  }

  private takeAnswers(): SentSettlement[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return this.answers.splice(0);
  }

  /** The job's claim for `limit` lanes, carrying every answer held, in the sender's next claim statement. */
  private async claimStatement(limit: number, sending: boolean): Promise<ClaimedTarget[] | 'lost'> {
    const { deps, job } = this;
    const { run } = job;
    if (!job.stop.leaseHeld()) return 'lost';
    const carried = this.takeAnswers();
    let claim: Awaited<ReturnType<typeof deps.claims.claim>>;
    try {
      claim = await deps.claims.claim(sending, {
        runId: run.runId,
        owner: job.token,
        sent: carried,
        leaseMs: job.leaseMs,
        firstSendKnown: run.firstSendAt !== null,
        limit,
      });
    } catch (error) {
      if (!isTransientDbError(error)) throw error;
      // The claim may have committed; its answers are held again (written alone, or by the close).
      for (const d of carried) this.delivered(d);
      job.stop.with('storage');
      this.claimLost = true;
      deps.events.emit('claim:lost', { runId: run.runId, error });
      return 'lost';
    }
    this.checkSettled(carried, claim.settled);
    for (const target of claim.claimed) this.leases.set(keyOf(target), claim.at + job.leaseMs);
    if (claim.firstSend) this.firstSent(claim.at);
    return claim.claimed;
  }

  private firstSent(at: number): void {
    const { run } = this.job;
    run.firstSendAt = new Date(at);
    this.deps.events.emit('run:first-send', { runId: run.runId, trigger: run.trigger, lagMs: at - run.scheduledAt.getTime() });
  }

  /** Writes delivered chats as `sent` (through an outage) in the sender's next claim statement, as a claim of no target. */
  private async writeSent(sent: SentSettlement[]): Promise<void> {
    if (sent.length === 0) return;
    const { deps, job } = this;
    const request = { runId: job.run.runId, owner: job.token, sent, leaseMs: job.leaseMs, firstSendKnown: true, limit: 0 };
    const written = await this.durably(sent.map(keyOf), 'sent', () => deps.claims.claim(true, request));
    if (written) this.checkSettled(sent, written.settled);
  }

  private checkSettled(sent: SentSettlement[], settled: ReadonlySet<string>): void {
    for (const d of sent) if (!settled.has(keyOf(d))) this.leaseLost(d.chatId);
  }

  private leaseLost(chatId: string): void {
    this.deps.events.emit('lease:lost', { runId: this.job.run.runId, accountId: this.job.run.account.id, chatId });
  }

  /** Moves a claimed target out of flight without a delivery, fenced by the lease and kept through an outage. */
  private async settle(target: TargetRef, settlement: TargetSettlement): Promise<boolean> {
    const { deps, job } = this;
    const at = new Date(deps.clock.now());
    return (await this.durably([keyOf(target)], 'settle', () => deps.targets.settle(job.run.runId, target, job.token, settlement, at))) === true;
  }

  /** Writes an answer through a database outage while the targets' leases last: a known answer is lost only with its process. */
  private async durably<T>(chatIds: string[] /* target keys */, what: string, write: () => Promise<T>): Promise<T | undefined> {
    const { deps, job } = this;
    const runId = job.run.runId;
    let delay = RETRY_FIRST_MS;
    const deadline = chatIds.length > 0 ? Math.min(...chatIds.map((c) => this.leases.get(c) ?? 0)) : deps.clock.now() + job.leaseMs;
    for (let failures = 0; ; failures++) {
      try {
        const result = await write();
        if (failures > 0) deps.events.emit('answer:written', { runId, what, chatIds, failures });
        return result;
      } catch (error) {
        if (!isTransientDbError(error)) throw error;
        job.stop.with('storage');
        if (failures === 0) deps.events.emit('answer:held', { runId, what, chatIds, error });
        if (deps.clock.now() + delay >= deadline) {
          deps.events.emit('answer:lost', { runId, what, chatIds, error });
          this.unrecorded.push(...chatIds);
          return undefined;
        }
        await deps.sleep(delay);
        delay = Math.min(RETRY_MAX_MS, delay * 2);
      }
    }
  }

  /** Records one part's answer (what it means: libs/core decideSendOutcome): the chat's next part, its stop, or its `sent`. */
  async result(target: ClaimedTarget, index: number, result: SendResult, firstPartStartedAt: number): Promise<PartNext> {
    const { deps, job } = this;
    const { run } = job;
    const tally = this.answered;
    tally.attempts++;
    const now = deps.clock.now();
    const at = new Date(now);
    const scope = { runId: run.runId, accountId: run.account.id, chatId: target.chatId, partIndex: index };
    const key = keyOf(target);
    const outcome = decideSendOutcome(result, {
      attempts: target.attempts,
      partIndex: index,
      partCount: run.parts.length,
      now,
      firstPartStartedAt,
      blockedUntil: tally.blockedUntil,
      maxRetries: deps.settings.maxRetries,
      random: deps.random,
      platformDeduplicates: run.account.platformDeduplicates,
    });
    deps.events.emit('send:result', { ...scope, platform: run.account.platform, outcome });
    switch (outcome.kind) {
      case 'sent-last': {
        tally.delivered++;
        tally.outcomes += OUTCOME_SENT;
        if (target.settling) deps.events.emit('send:settled', { ...scope, platform: run.account.platform });
        return {
          chatId: target.chatId,
          ...(target.threadId && { threadId: target.threadId }),
          at,
          latencyMs: outcome.latencyMs,
          partsSent: outcome.partsSent,
          messageId: outcome.messageId,
        };
      }
      case 'next-part': {
        tally.delivered++;
        const owned = await this.durably([key], 'part', () =>
          deps.parts.ask({ runId: run.runId, target, owner: job.token, partsSent: outcome.partsSent, messageId: outcome.messageId }),
        );
        if (!owned) deps.events.emit('lease:lost', scope);
        return owned ? 'next-part' : 'stop';
      }
      case 'account-wait': {
        if (outcome.floodWait) tally.floodWaits.push(now);
        tally.blockedUntil = outcome.blockedUntil;
        job.stop.with('account-wait');
        await this.durably([key], 'flood wait', () => deps.repo.accounts.block(run.account.id, new Date(outcome.until), at));
        deps.events.emit('account:blocked', { ...scope, code: outcome.code, retryAfterMs: outcome.retryAfterMs });
        await this.release(target, outcome.until, outcome.code);
        return 'stop';
      }
      case 'chat-wait': {
        await this.release(target, outcome.until, outcome.code);
        return 'stop';
      }
      case 'stop-account': {
        job.stop.with('account-unavailable');
        await this.release(target, outcome.releaseAt, outcome.code);
        if (RESTRICTING_CODES.includes(outcome.code)) {
          // Not disconnected: restricted (cooling without an end) until an operator lifts it.
          const restricted = await this.durably([key], 'restrict', () => deps.cooling.restrict(run.account.id, at, outcome.code));
          if (restricted === true)
            deps.events.emit('account:cooling', {
              accountId: run.account.id,
              platform: run.account.platform,
              reason: COOLING_RESTRICTED,
              until: 0,
              paceFactor: 1,
              words: `${coolingWords(COOLING_RESTRICTED, deps.settings.cooling)}: ${restrictionWords(outcome.code, run.account.platform)}`,
            });
          return 'stop';
        }
        await this.durably([key], 'disconnect', () =>
          deps.repo.accounts.disconnect(run.account.id, accountAdvice(run.account.platform, run.account.id, 'disconnected', outcome.code), at),
        );
        return 'stop';
      }
      case 'fail': {
        tally.outcomes += OUTCOME_FAILED;
        await this.settle(target, { status: 'failed', errorCode: outcome.code, errorMessage: outcome.message, countAttempt: true });
        // The chat joins the suppression list and its directory entry cannot send: one statement.
        const reason = cannotSendReasonOf(outcome.code);
        if (outcome.suppress || reason !== null) {
          // Best effort: a chat not listed now is listed by its next refusal.
          await deps.repo.accounts
            .chatRefused(run.account.id, target.chatId, outcome.code, { suppress: outcome.suppress, reason }, at)
            .catch((error: unknown) => deps.events.emit('chat:suppress-failed', { ...scope, error }));
        }
        return 'stop';
      }
      case 'retry':
      case 'settle': {
        // `settle`: sent again to be settled by a platform that deduplicates; marked doubtful meanwhile
        await this.settle(target, {
          status: 'pending',
          nextAttemptAt: new Date(outcome.at),
          countAttempt: true,
          errorCode: outcome.code,
          errorMessage: outcome.message,
          ...(outcome.kind === 'settle' && { ambiguous: true }),
        });
        return 'stop';
      }
      case 'unknown': {
        await this.settle(target, { status: 'unknown', errorCode: outcome.code, errorMessage: outcome.message, countAttempt: true });
        return 'stop';
      }
      case 'chat-moved': {
        // renamed to the chat's new id and due at once (skipped when the new id is already a target: the chat gets it once)
        const moved =
          (await this.durably([key], 'move', () =>
            deps.targets.moveTarget(run.runId, run.campaignId, target, outcome.newChatId, job.token, outcome.code, at),
          )) ?? 'lost';
        deps.events.emit('chat:moved', { ...scope, code: outcome.code, newChatId: outcome.newChatId, moved });
        return 'stop';
      }
    }
  }
}

const keyOf = (t: TargetRef): string => targetKey(t.chatId, t.threadId);
