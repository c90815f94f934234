import { CHAT_WAIT_CODES, explainRun, explainTarget, runEta, slotIntervalMs, type RunFacts } from '@metronome/core';
import { countRuns, emptyCounts, RunWaitingRepository, type RunRow, type RunWaitingRow } from '@metronome/db';
import { redisKeys } from '@metronome/redis';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { decodeChatCursor, decodePosition, encodeChatCursor, encodePosition, pageOf } from '../cursor.js';
import { notFound } from '../errors.js';
import { cancelRun, pauseRun, resumeRun, retryFailedRun } from '../run-actions.js';
import { errorResponses, idParams } from '../schemas/common.js';
import { listRunsQuery, listTargetsQuery, run, runPage, runView, targetPage, targetView, type RunExplanation } from '../schemas/runs.js';
import { withTimeout } from '../timeout.js';

const REDIS_READ_TIMEOUT_MS = 1000;
// The sender's RATE_BURST is not the API's to know; at its default of 1 an account's next
// slot is free once the pace's theoretical arrival time (TAT) has passed.
const ASSUMED_BURST = 1;

/** Runs: reads, and the operator's commands (pause, resume, cancel, retry-failed). */
export const runRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const waitingRepo = new RunWaitingRepository(ctx.db);
  const keys = redisKeys(ctx.config.keyPrefix);

  /**
   * Each account's pace (GCRA TAT, ms) and whether its lock is held, in one MGET. Redis only
   * speeds things up: when it does not answer, the runs are explained without it.
   */
  const accountStates = async (accountIds: string[]): Promise<Map<string, { tat: number; locked: boolean }>> => {
    const out = new Map<string, { tat: number; locked: boolean }>();
    if (accountIds.length === 0) return out;
    try {
      const values = await withTimeout(ctx.redis.mget(...accountIds.flatMap((id) => [keys.accountPace(id), keys.accountLock(id)])), REDIS_READ_TIMEOUT_MS, 'pace read');
      accountIds.forEach((id, i) => out.set(id, { tat: Number(values[2 * i] ?? 0) || 0, locked: values[2 * i + 1] != null }));
    } catch (err) {
      ctx.logger.warn({ err }, 'could not read account paces; runs are explained without them');
    }
    return out;
  };

  /** The facts libs/core explains a run from, and its explanation, for every run shown. */
  const explain = async (rows: RunRow[]): Promise<Map<string, { facts: RunFacts; explanation: RunExplanation }>> => {
    const now = ctx.now();
    const found = await waitingRepo.factsOfRuns(rows.map((r) => r.id), now, CHAT_WAIT_CODES);
    const open = [...found.values()].filter((f) => f.status === 'queued' || f.status === 'running');
    const states = await accountStates([...new Set(open.map((f) => f.account.id))]);
    const out = new Map<string, { facts: RunFacts; explanation: RunExplanation }>();
    for (const row of found.values()) {
      const facts = toFacts(row, states.get(row.account.id), now, ctx.config.defaultMaxSendPerMinute);
      out.set(row.runId, { facts, explanation: { waiting: explainRun(facts, now), eta: runEta(facts, now) } });
    }
    return out;
  };

  // Counts are derived from run_targets for every run shown, in one query per answer; the
  // explanations in one more, and one Redis read.
  const withCounts = async (rows: RunRow[]) => {
    const [counts, explained] = await Promise.all([countRuns(ctx.db, rows.map((r) => r.id)), explain(rows)]);
    return rows.map((r) => runView(r, counts.get(r.id) ?? emptyCounts(r.total), explained.get(r.id)?.explanation ?? { waiting: null, eta: null }));
  };
  const one = async (row: RunRow) => (await withCounts([row]))[0] as Awaited<ReturnType<typeof withCounts>>[number];

  app.get(
    '/runs',
    { schema: { tags: ['runs'], summary: 'List runs, newest first', querystring: listRunsQuery, response: { 200: runPage, ...errorResponses() } } },
    async (req) => {
      const { limit, cursor, status, campaignId, accountId, tenantId } = req.query;
      const before = cursor === undefined ? undefined : decodePosition(cursor);
      const scope = scopeOf(req.caller);
      // Another tenant's id finds nothing, exactly as another tenant's campaignId or accountId
      // does: the answer does not tell whether that tenant exists.
      if (tenantId !== undefined && scope !== null && tenantId !== scope) return { items: [], nextCursor: null };
      const rows = await ctx.runs.list({ tenantId: scope ?? tenantId ?? null, status, campaignId, accountId }, { limit: limit + 1, before });
      const page = pageOf(rows, limit, (r) => encodePosition({ at: r.cursorAt, id: r.id }));
      return { items: await withCounts(page.rows), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/runs/:id',
    { schema: { tags: ['runs'], summary: 'One run with its counts', params: idParams, response: { 200: run, ...errorResponses(404) } } },
    async (req) => {
      const found = await ctx.runs.find(req.params.id, scopeOf(req.caller));
      if (!found) throw notFound('run');
      return one(found);
    },
  );

  app.get(
    '/runs/:id/targets',
    {
      schema: {
        tags: ['runs'],
        summary: "A run's targets in chat id order",
        params: idParams,
        querystring: listTargetsQuery,
        response: { 200: targetPage, ...errorResponses(404) },
      },
    },
    async (req) => {
      const { limit, cursor, status } = req.query;
      const after = cursor === undefined ? undefined : decodeChatCursor(cursor);
      const found = await ctx.runs.find(req.params.id, scopeOf(req.caller));
      if (!found) throw notFound('run');
      const [rows, explained] = await Promise.all([ctx.runs.listTargets(found.id, status, limit + 1, after), explain([found])]);
      const page = pageOf(rows, limit, (t) => encodeChatCursor(t.chatId));
      const ofRun = explained.get(found.id);
      const now = ctx.now();
      const waitingOf = (t: (typeof rows)[number]) => (ofRun ? explainTarget(t, ofRun.explanation.waiting, ofRun.facts, now) : null);
      return { items: page.rows.map((t) => targetView(t, waitingOf(t))), nextCursor: page.nextCursor };
    },
  );

  const commands = [
    { path: 'pause', act: pauseRun, summary: 'queued | running → paused (pausedReason operator); no new send starts' },
    { path: 'resume', act: resumeRun, summary: "paused → queued: continues with its pending targets under the campaign's current window" },
    { path: 'cancel', act: cancelRun, summary: 'queued | running | paused → cancelled; pending targets become skipped' },
    { path: 'retry-failed', act: retryFailedRun, summary: 'finished run: failed and unknown targets back to pending, run queued again' },
  ] as const;
  for (const command of commands) {
    app.post(
      `/runs/:id/${command.path}`,
      { schema: { tags: ['runs'], summary: command.summary, params: idParams, response: { 202: run, ...errorResponses(404, 409) } } },
      async (req, reply) => {
        const changed = await command.act(ctx, req.params.id, scopeOf(req.caller));
        return reply.code(202).send(await one(changed));
      },
    );
  }
};

/** A run's facts as libs/core reads them: the account's pace and lock from Redis folded in. */
function toFacts(row: RunWaitingRow, state: { tat: number; locked: boolean } | undefined, now: Date, defaultPerMinute: number): RunFacts {
  const perMinute = row.account.maxSendPerMinute ?? defaultPerMinute;
  const freeAt = state ? state.tat - (ASSUMED_BURST - 1) * slotIntervalMs(perMinute) : 0;
  const dueSince = row.dueSince && row.dueSince.getTime() > row.scheduledAt.getTime() ? row.dueSince : row.scheduledAt;
  return {
    status: row.status,
    pausedReason: row.pausedReason,
    scheduledAt: row.scheduledAt,
    firstSendAt: row.firstSendAt,
    windowEndAt: row.windowEndAt,
    timezone: row.timezone,
    window: { start: row.windowStart, end: row.windowEnd },
    autoResume: row.autoResume,
    everySeconds: row.everySeconds,
    partsPerChat: row.partsPerChat,
    account: { id: row.account.id, platform: row.account.platform, status: row.account.status, blockedUntil: row.account.blockedUntil, perMinute },
    total: row.total,
    skipped: row.skipped,
    pending: row.pending,
    inFlight: row.inFlight,
    due: row.due,
    dueSince: row.due > 0 ? dueSince : null,
    holds: row.holds,
    paceFreeAt: freeAt > now.getTime() ? new Date(freeAt) : null,
    accountBusy: (state?.locked ?? false) && row.otherRunActive,
  };
}
