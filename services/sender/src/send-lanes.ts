import {
  chatTextOverLimit,
  compileParts,
  followsPlatformWait,
  MEDIA_REF_INVALID,
  personalPart,
  targetHold,
  typingMs,
  waitsInline,
  type MessageTemplate,
  type SendResult,
} from '@metronome/core';
import type { ClaimedTarget, RunForSend, TargetRef } from '@metronome/db';
import type { PaceFloors } from '@metronome/redis';
import type { OutgoingPart, Transport, TransportAccount } from '@metronome/transports';
import type { JobDeps } from './deps.js';
import type { HealthPlan, LaneReport } from './job-report.js';
import { JobPace, JobStop } from './job-pace.js';
import type { MediaUpload, PreparedPart } from './media-refs.js';
import { JobWrites, type AnswerTally } from './writes.js';

// The lanes of one job: up to `lanes` chats at a time, each chat's parts in order through one path, paced by JobPace, written by JobWrites.

/** What the lanes of one job share. */
interface LaneContext {
  readonly run: RunForSend;
  readonly account: TransportAccount;
  readonly transport: Transport;
  readonly pace: JobPace;
  readonly writes: JobWrites;
  readonly stop: JobStop;
  readonly templates: (MessageTemplate | null)[];
  /** the lanes' claims: parts reserved of the SENDS_PER_JOB budget, due times taken, none left due */
  readonly claims: { reserved: number; taken: number; drained: boolean };
  /** the job's first send follows a platform wait that just ended: it goes without typing */
  skipTypingOnce: boolean;
}

/** Sends a run's due targets with up to `lanes` chats in parallel, at most SENDS_PER_JOB parts. */
export async function runLanes(
  deps: JobDeps,
  run: RunForSend,
  account: TransportAccount,
  transport: Transport,
  token: string,
  lanes: number,
  floors: PaceFloors,
  job: { perMinute: number; planHealth: (report: AnswerTally) => HealthPlan; lease: { heldAt(now: number): boolean } },
): Promise<LaneReport> {
  const stop = new JobStop(deps, job.lease);
  const claims = { reserved: 0, taken: 0, drained: false };
  const spare = () => Math.min(deps.settings.sendsPerJob - claims.reserved, (run.dueTimes.length - claims.taken) * run.parts.length);
  const pace = new JobPace(deps, run, token, transport, stop, { perMinute: job.perMinute, lanes, spare });
  // a chat is held while typed to as well; beyond its sends' own time, as long as the account lock lasts
  const typingMaxMs = run.account.typing ? run.account.typing.maxSeconds * 1000 : 0;
  const perPartMs = deps.settings.sendTimeoutMs + pace.firstPartMaxWaitMs + pace.partSpacingMs + deps.settings.partJitterMs + typingMaxMs;
  const writes = new JobWrites(deps, { run, token, leaseMs: run.parts.length * perPartMs + deps.settings.lockTtlMs, stop });
  const blockedWithinMs = Math.max(1_000, deps.settings.maxInlineWaitMs);
  const ctx: LaneContext = {
    run,
    account,
    transport,
    pace,
    writes,
    stop,
    templates: compileParts(run.parts),
    claims,
    skipTypingOnce: followsPlatformWait(run.account.blockedUntil, deps.clock.now(), blockedWithinMs),
  };
  // every lane ends before the job does (allSettled): a lane sending after the lock's release would break one fan-out per account
  const unsubscribe = stop.wakeOnDrain();
  const results = await Promise.allSettled(Array.from({ length: pace.lanes }, () => lane(deps, ctx))).finally(unsubscribe);
  // set before the last write, so one that fails still hands on a request that left late
  Object.assign(floors, pace.floors(stop.reason === 'lock-lost'));
  const tally = writes.tally();
  const health = job.planHealth(tally);
  const last = await writes.close(health.kind === 'write' ? { accountId: run.account.id, write: health.write } : null);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
  return { ...tally, ...pace.held(), stop: stop.reason, health, ...last };
}

function mayClaim(deps: JobDeps, ctx: LaneContext): boolean {
  const { claims, stop } = ctx;
  if (stop.reason || claims.drained) return false;
  if (deps.draining.aborted) {
    stop.with('drain');
    return false;
  }
  // the budget stops new claims only: chats other lanes hold still go out
  if (claims.reserved >= deps.settings.sendsPerJob) return false;
  // targets not loaded, or due later than a lane waits in-process, are left to the next job
  const dueTimes = ctx.run.dueTimes;
  if (claims.taken >= dueTimes.length || !waitsInline(dueTimes[claims.taken]!, deps.clock.now(), ctx.pace.gateMaxWaitMs)) {
    claims.drained = true;
    return false;
  }
  if (windowClosed(deps, ctx.run)) {
    stop.with('window');
    return false;
  }
  return true;
}

async function lane(deps: JobDeps, ctx: LaneContext): Promise<void> {
  const partCount = ctx.run.parts.length;
  for (;;) {
    if (!mayClaim(deps, ctx)) return;
    // reserved before claiming: lanes claim concurrently and must not overshoot the budget together
    ctx.claims.reserved += partCount;
    const claimed = await claimAtSlot(deps, ctx, ctx.run.dueTimes[ctx.claims.taken++]!);
    if (!claimed) {
      ctx.claims.reserved -= partCount;
      return;
    }
    ctx.claims.reserved -= claimed.target.partsSent;
    try {
      await sendChat(deps, ctx, claimed.target, claimed.first);
    } catch (error) {
      ctx.stop.with('error');
      throw error;
    }
  }
}

/** A chat's first part, prepared before its chat was known, with its slot, its typing (claimed that long before the slot) and whether the claim stamped it. */
interface FirstPart {
  prepared: PreparedPart;
  slotAt: number;
  typing: number;
  stamped: boolean;
}

/** Prepares a first part, takes its slot and claims a target at it (or before it, to type). Null: the lane stops. */
async function claimAtSlot(deps: JobDeps, ctx: LaneContext, dueAt: number): Promise<{ target: ClaimedTarget; first: FirstPart } | null> {
  const { pace, stop } = ctx;
  // a chat held a little longer is waited for before its slot is taken, so the claim finds it due
  if (dueAt > deps.clock.now() && !(await stop.until(dueAt))) {
    if (deps.draining.aborted) stop.with('drain');
    return null;
  }
  const prepared = await outgoingPart(deps, ctx, 0);
  const upload = 'failure' in prepared ? undefined : prepared.upload;
  const typing = 'failure' in prepared ? 0 : typingAhead(ctx, prepared.part);
  let slotAt = deps.clock.now();
  if (!('failure' in prepared)) {
    const slot = await pace.slot(null, pace.firstPartMaxWaitMs + typing, typing);
    if (!slot.go) {
      await upload?.settle(null);
      return null;
    }
    const woke = await (typing > 0 ? pace.wakeBefore(slot.at - typing) : pace.waitForSlot(slot.at));
    if (!woke || windowClosed(deps, ctx.run)) {
      if (windowClosed(deps, ctx.run)) stop.with('window');
      if (deps.draining.aborted) stop.with('drain');
      await upload?.settle(null);
      return null;
    }
    slotAt = slot.at;
  }
  const stamped = !('failure' in prepared) && typing === 0;
  const target = await ctx.writes.claim(stamped);
  if (target === null || target === 'lost') {
    if (target === null) ctx.claims.drained = true;
    await upload?.settle(null);
    return null;
  }
  return { target, first: { prepared, slotAt, typing, stamped } };
}

/** Sends a claimed chat: its whole message, or its parts left, in order; a delivered chat's `sent` is written by the job's writes. */
async function sendChat(deps: JobDeps, ctx: LaneContext, target: ClaimedTarget, first: FirstPart): Promise<void> {
  const { run, writes } = ctx;
  const upload = 'failure' in first.prepared ? undefined : first.prepared.upload;
  const tooLong = chatTextOverLimit(
    run.parts,
    ctx.templates,
    ctx.transport.textLimits,
    { runId: run.runId, chatId: target.chatId },
    target.vars ?? null,
    target.partsSent,
  );
  if (tooLong) {
    // longer than the platform takes once rendered for this chat: the chat fails whole, nothing sent
    await upload?.settle(null);
    return sendParts(deps, ctx, target, target.partsSent, { ...first, prepared: { failure: tooLong } });
  }
  if (target.partsSent > 0) {
    // some of its parts went out earlier: its next part is not the one prepared, and waits like any later part
    await upload?.settle(null);
    if ('failure' in first.prepared || (await writes.markWaiting(target))) await sendParts(deps, ctx, target, target.partsSent);
    return;
  }
  if (!('failure' in first.prepared)) {
    const chat = await ctx.pace.chatNow(target.chatId);
    if (!chat.ok) {
      // only this chat's pace holds it (the account slot is spent, which only slows the account)
      await upload?.settle(null);
      return writes.release(target, chat.until, chat.code ?? null);
    }
  }
  return sendParts(deps, ctx, target, 0, first);
}

/** Sends a claimed chat's parts from `from` on, in order; `first` is part `from` when prepared before the claim. */
async function sendParts(deps: JobDeps, ctx: LaneContext, target: ClaimedTarget, from: number, first?: FirstPart): Promise<void> {
  const { run, writes } = ctx;
  let firstPartStartedAt = 0;
  let ready = first;
  const refreshed = new Set<number>();
  // when this chat's previous part was written: the next waits a chat interval from then
  const chat = { writtenAt: 0 };
  for (let index = from; index < run.parts.length; index++) {
    const part = await writable(deps, ctx, target, index, index === from, chat.writtenAt, ready);
    ready = undefined;
    if (part === null) return;
    const startedAt = deps.clock.now();
    if (firstPartStartedAt === 0) firstPartStartedAt = startedAt;
    const result = 'failure' in part ? part.failure : await transmit(deps, ctx, target, index, part, chat);
    if (result === null) return writes.release(target, deps.clock.now());
    if ('part' in part && part.part.type === 'media' && !part.upload && isRefRefused(result) && !refreshed.has(index)) {
      // the platform no longer knows the reference: forget it and send again, uploading, once per part per job
      refreshed.add(index);
      const sent = run.parts[index]!;
      if (sent.type === 'media') await deps.media.forget(ctx.account.id, sent.mediaId, part.part.mediaRef);
      if (!(await writes.markWaiting(target))) return;
      index--;
      continue;
    }
    const outcome =
      refreshed.has(index) && isRefRefused(result)
        ? { kind: 'retriable' as const, code: MEDIA_REF_INVALID, message: 'the platform refused a freshly uploaded media reference' }
        : result;
    const next = await writes.result(target, index, outcome, firstPartStartedAt);
    if (next === 'stop') return;
    if (next !== 'next-part') return writes.delivered(next);
  }
}

function isRefRefused(result: SendResult): boolean {
  return result.kind === 'rejected' && result.code === MEDIA_REF_INVALID;
}

/** Gets part `index` of a held target ready to write, in one order for every part: content, slot, typing, the slot slept out, the chat's pace, the stamp. */
async function writable(
  deps: JobDeps,
  ctx: LaneContext,
  target: ClaimedTarget,
  index: number,
  firstOfClaim: boolean,
  chatWrittenAt: number,
  ready?: FirstPart,
): Promise<PreparedPart | null> {
  const { pace, stop } = ctx;
  if (ready && ('failure' in ready.prepared || ready.stamped)) return ready.prepared;
  const giveBack = async (at: number, upload?: MediaUpload) => {
    await upload?.settle(null).catch(() => undefined);
    await ctx.writes.release(target, at);
    return null;
  };
  let part: Extract<PreparedPart, { part: OutgoingPart }>;
  let slotAt: number;
  let typing: number;
  // after a platform's wait (slow mode, a flood wait) a chat's first part goes without typing
  const backFromWait = firstOfClaim && backFromPlatformWait(target);
  if (ready && !('failure' in ready.prepared)) {
    part = ready.prepared;
    slotAt = ready.slotAt;
    typing = backFromWait ? 0 : ready.typing;
  } else {
    if (stop.halted() || (firstOfClaim && stop.reason)) return giveBack(deps.clock.now());
    if (!firstOfClaim && deps.settings.partJitterMs > 0) await stop.pause(deps.random() * deps.settings.partJitterMs);
    let prepared: PreparedPart;
    try {
      // the content before the slot: lanes released together by one upload would go back to back
      prepared = await outgoingPart(deps, ctx, index);
    } catch (error) {
      await giveBack(deps.clock.now()).catch(() => undefined);
      throw error;
    }
    if ('failure' in prepared) return prepared;
    part = prepared;
    typing = backFromWait ? 0 : typingAhead(ctx, part.part);
    const slot = await pace.slot(target.chatId, firstOfClaim ? pace.firstPartMaxWaitMs + typing : Number.MAX_SAFE_INTEGER, typing);
    if (!slot.go) return giveBack(slot.chatWaitUntil ?? deps.clock.now(), part.upload);
    slotAt = slot.at;
  }
  const sendAt = typing > 0 ? await typeBeforeSlot(deps, ctx, target, part.part, typing, slotAt) : slotAt;
  if (sendAt === null || !(await pace.waitForSlot(sendAt))) return giveBack(deps.clock.now(), part.upload);
  const chatGap = pace.chatGapMs(chatWrittenAt);
  if (chatGap > 0) {
    await stop.pause(chatGap);
    if (stop.halted()) return giveBack(deps.clock.now(), part.upload);
  }
  if (windowClosed(deps, ctx.run)) {
    stop.with('window');
    return giveBack(deps.clock.now(), part.upload);
  }
  const stamped = await ctx.writes.stamp(target);
  if (stamped === 'stamped') return part;
  if (stamped === 'failed') return giveBack(deps.clock.now(), part.upload);
  await part.upload?.settle(null).catch(() => undefined);
  return null;
}

async function transmit(
  deps: JobDeps,
  ctx: LaneContext,
  target: ClaimedTarget,
  index: number,
  part: { part: OutgoingPart; upload?: MediaUpload },
  chat: { writtenAt: number },
): Promise<SendResult | null> {
  const { run } = ctx;
  const turn = await ctx.pace.spaceWrite();
  // null: not sent, the lock may be another's (a stalled sender)
  if (!ctx.stop.leaseHeld()) {
    turn.ended();
    await part.upload?.settle(null).catch(() => undefined);
    return null;
  }
  // when the request left: as the transport tells (it may wait for a connection), else now
  chat.writtenAt = deps.clock.now();
  const onWritten = () => {
    chat.writtenAt = Math.max(chat.writtenAt, deps.clock.now());
    turn.onWritten?.();
  };
  const result = await ctx.transport
    .send(ctx.account, {
      chatId: target.chatId,
      ...(target.threadId && { threadId: target.threadId }),
      part: personalPart(part.part, ctx.templates[index] ?? null, { runId: run.runId, chatId: target.chatId, partIndex: index }, target.vars ?? null),
      partIndex: index,
      partCount: run.parts.length,
      // a topic's own key (the platform would drop a second topic's part as a repeat)
      idempotencyKey: `${run.runId}:${target.threadId ? `${target.chatId}/${target.threadId}` : target.chatId}:${index}`,
      onWritten,
    })
    .finally(turn.ended);
  if (part.upload) {
    const ref = result.kind === 'delivered' && result.mediaRef ? result.mediaRef : null;
    await part.upload.settle(ref).catch((error: unknown) => {
      // only the write to PostgreSQL failed: this replica keeps the reference
      deps.events.emit('media:unsaved', { runId: run.runId, accountId: run.account.id, chatId: target.chatId, partIndex: index, error });
    });
  }
  return result;
}

async function outgoingPart(deps: JobDeps, ctx: LaneContext, index: number): Promise<PreparedPart> {
  const part = ctx.run.parts[index]!;
  if (part.type === 'text') return { part: { type: 'text', text: part.text } };
  return deps.media.prepare(ctx.transport, ctx.account, part, deps.clock.now());
}

// Typing first (CONTRACT §3) is taken from the wait the pace imposes: it ends at the part's slot.

/** How long the chat sees the account typing before `part`, ms (0: no typing, or the job's first send after a platform wait). */
function typingAhead(ctx: LaneContext, part: OutgoingPart): number {
  const typing = ctx.run.account.typing;
  if (!typing || !ctx.transport.showTyping) return 0;
  if (ctx.skipTypingOnce) {
    ctx.skipTypingOnce = false;
    return 0;
  }
  return typingMs(typing, part);
}

function backFromPlatformWait(target: ClaimedTarget): boolean {
  if (target.errorCode === undefined) return false;
  const hold = targetHold({ attempts: target.attempts, errorCode: target.errorCode });
  return hold === 'slow_mode' || hold === 'flood_wait';
}

/** Shows typing from `slot - ms` (or now) for `ms`, renewed as often as the transport's indicator fades. */
async function typeBeforeSlot(deps: JobDeps, ctx: LaneContext, to: TargetRef, part: OutgoingPart, ms: number, slot: number): Promise<number | null> {
  const { stop } = ctx;
  const slotAt = ctx.pace.writableAt(slot);
  const start = Math.max(deps.clock.now(), slotAt - ms);
  await stop.pause(start - deps.clock.now());
  const sendAt = Math.max(slotAt, start + ms);
  const every = ctx.transport.typingLastsMs;
  for (;;) {
    if (stop.halted()) return null;
    const shownAt = deps.clock.now();
    await ctx.transport.showTyping!(ctx.account, to.chatId, part, to.threadId);
    const next = every ? shownAt + every * 0.9 : Number.POSITIVE_INFINITY;
    if (next >= sendAt) break;
    await stop.pause(next - deps.clock.now());
  }
  return sendAt;
}

function windowClosed(deps: JobDeps, run: RunForSend): boolean {
  return run.windowEndAt !== null && deps.clock.now() >= run.windowEndAt.getTime();
}
