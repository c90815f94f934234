import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { postgresAnswers, readinessOf, type Readiness } from '@metronome/observability';
import { redisKeys, redisReadiness } from '@metronome/redis';
import { z } from 'zod';
import type { ApiContext } from '../context.js';
import { withTimeout } from '../timeout.js';

const PROBE_TIMEOUT_MS = 2000;
const PLATFORMS = ['http', 'telegram', 'telegram_user', 'whatsapp'] as const;
const ACCOUNT_STATUSES = ['active', 'disabled', 'disconnected', 'pairing', 'cooling'] as const;

/** `/healthz`, `/readyz` and `/metrics`: no auth, for orchestrators and Prometheus. */
export const operationRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  // on a cluster, Redis is ready when the node serving the deployment's slot answers, not any node
  const probeKey = redisKeys(ctx.config.keyPrefix).readiness;
  const readiness = (): Promise<Readiness> =>
    readinessOf({ postgres: postgresAnswers(ctx.db, PROBE_TIMEOUT_MS), redis: () => redisReadiness(ctx.redis, probeKey, PROBE_TIMEOUT_MS) });

  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        security: [],
        tags: ['operations'],
        summary: 'The process is up',
        response: { 200: z.object({ ok: z.literal(true) }) },
      },
    },
    async () => ({ ok: true as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        security: [],
        tags: ['operations'],
        summary: 'PostgreSQL and Redis answer (503 otherwise)',
        response: {
          200: z.object({ ok: z.boolean(), postgres: z.boolean(), redis: z.boolean() }),
          503: z.object({
            ok: z.boolean(),
            postgres: z.boolean(),
            redis: z.boolean(),
            reason: z.string().optional().describe('*(extension)* why not, as the scheduler and the sender say it (e.g. the cluster does not serve the slot)'),
          }),
        },
      },
    },
    async (req, reply) => {
      const { ok, postgres, redis, reason } = await readiness();
      if (!ok) req.log.warn({ reason }, 'not ready');
      return reply.code(ok ? 200 : 503).send({ ok, postgres: postgres === true, redis: redis === true, ...(!ok && reason && { reason }) });
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        security: [],
        tags: ['operations'],
        summary: 'Prometheus metrics',
        response: { 200: { description: 'the Prometheus text format', content: { 'text/plain': { schema: z.string() } } } },
      },
    },
    async (req, reply) => {
      // Gauges are computed at scrape time from PostgreSQL and the queue, so every replica reports the same and keeps no state.
      // The dependency gauges come first and alone: they must be served even when the others fail.
      const { postgres, redis } = await readiness();
      ctx.metrics.dependencyUp.set({ dependency: 'postgres' }, postgres === true ? 1 : 0);
      ctx.metrics.dependencyUp.set({ dependency: 'redis' }, redis === true ? 1 : 0);
      try {
        const [runs, jobs, due, accounts] = await Promise.all([
          withTimeout(ctx.runs.countByStatus(), PROBE_TIMEOUT_MS, 'run counts'),
          withTimeout(ctx.queue.counts(), PROBE_TIMEOUT_MS, 'queue counts'),
          withTimeout(ctx.runs.dueNotStarted(ctx.now()), PROBE_TIMEOUT_MS, 'due runs'),
          withTimeout(ctx.accounts.countByStatus(ctx.now()), PROBE_TIMEOUT_MS, 'account counts'),
        ]);
        ctx.metrics.runsDueNotStarted.set(due.count);
        ctx.metrics.runsDueNotStartedOldestAge.set(due.oldestAgeSeconds);
        for (const [status, n] of Object.entries(runs)) ctx.metrics.runs.set({ status }, n);
        for (const [state, n] of Object.entries(jobs)) ctx.metrics.queueJobs.set({ state }, n);
        // Every (platform, status) pair is set, zero included, so a count that drops to none is seen.
        ctx.metrics.accounts.reset();
        ctx.metrics.accountsBlocked.reset();
        for (const platform of PLATFORMS) {
          ctx.metrics.accountsBlocked.set({ platform }, 0);
          for (const status of ACCOUNT_STATUSES) ctx.metrics.accounts.set({ platform, status }, 0);
        }
        for (const a of accounts) {
          ctx.metrics.accounts.set({ platform: a.platform, status: a.status }, a.count);
          if (a.status === 'active') ctx.metrics.accountsBlocked.set({ platform: a.platform }, a.blocked);
        }
      } catch (err) {
        // The process metrics are still worth serving; the gauges keep their last values.
        req.log.warn({ err }, 'could not refresh run and queue gauges');
      }
      const text = await ctx.metrics.registry.metrics();
      return reply.type(ctx.metrics.registry.contentType).send(text);
    },
  );
};
