import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { RunEventHub, type AccountEvent, type DirectoryEvent, type RunEvent } from '../events/run-event-hub.js';
import { formatAccountEvent, formatDirectoryEvent, formatRunEvent, HEARTBEAT, parseLastEventId } from '../events/sse.js';
import type { StreamSlots } from '../events/stream-slots.js';
import { ApiError } from '../errors.js';
import { errorResponses } from '../schemas/common.js';

export interface EventRoutesOptions {
  ctx: ApiContext;
  slots: StreamSlots;
  heartbeatMs?: number;
}

// When another stream of the token closes is unpredictable: try again in a while.
const STREAMS_RETRY_AFTER_SECONDS = 10;

const REPLAY_LIMIT = 1000;
// A slow reader is cut off rather than buffered without end; it reconnects with Last-Event-ID.
const MAX_BUFFERED_BYTES = 1 << 20;

/** `GET /v1/events`: run status changes as Server-Sent Events, for the caller's tenant. */
export const eventRoutes: FastifyPluginAsyncZod<EventRoutesOptions> = async (app, { ctx, slots, heartbeatMs = 15_000 }) => {
  const hub = new RunEventHub({ databaseUrl: ctx.config.databaseUrl, db: ctx.db, runs: ctx.runs, logger: ctx.logger });
  // Before the server stops accepting: open streams would otherwise hold close() forever.
  app.addHook('preClose', () => hub.close());

  app.get(
    '/events',
    {
      schema: {
        operationId: 'streamEvents',
        tags: ['events'],
        summary:
          'Server-Sent Events: `run` on every run status change (send Last-Event-ID to replay missed ones); `account` {accountId, status} on every account status change; `directory` {accountId, status, synced, size, until, reason} as a chat directory sync progresses',
        headers: z.object({ 'last-event-id': z.string().optional().describe('id of the last event received') }),
        response: { 200: { description: 'the event stream', content: { 'text/event-stream': { schema: z.string() } } }, ...errorResponses() },
      },
    },
    async (req, reply) => {
      const tenantId = scopeOf(req.caller);
      // one token per tenant, and the admin's
      const slot = await slots.take(tenantId === null ? 'admin' : `tenant:${tenantId}`);
      if (!slot) {
        const retryAfter = { 'retry-after': String(STREAMS_RETRY_AFTER_SECONDS) };
        throw new ApiError(429, 'rate_limited', `at most ${ctx.config.sseMaxPerToken} event streams per token at once`, [], retryAfter);
      }
      const raw = reply.raw;
      const write = (chunk: string) => {
        if (raw.destroyed) return;
        if (raw.writableLength > MAX_BUFFERED_BYTES) raw.destroy();
        else raw.write(chunk);
      };
      // Subscribe before replaying, buffering live events, so none falls between the two.
      let buffered: RunEvent[] | null = [];
      // account and directory events, in the order they came (neither is replayed)
      let bufferedAccounts: (AccountEvent | DirectoryEvent)[] | null = [];
      const formatOther = (e: AccountEvent | DirectoryEvent) => ('synced' in e ? formatDirectoryEvent(e) : formatAccountEvent(e));
      let unsubscribe: () => void;
      try {
        unsubscribe = await hub.subscribe({
          tenantId,
          send: (e) => (buffered ? buffered.push(e) : write(formatRunEvent(e))),
          sendAccount: (e) => (bufferedAccounts ? bufferedAccounts.push(e) : write(formatAccountEvent(e))),
          sendDirectory: (e) => (bufferedAccounts ? bufferedAccounts.push(e) : write(formatDirectoryEvent(e))),
          end: () => raw.end(),
        });
      } catch (err) {
        slot.release();
        throw err;
      }
      reply.hijack();
      const heartbeat = setInterval(() => write(HEARTBEAT), heartbeatMs);
      raw.on('close', () => {
        clearInterval(heartbeat);
        slot.release();
        unsubscribe();
      });
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      write('retry: 3000\n\n');
      const accountsMeanwhile = bufferedAccounts;
      bufferedAccounts = null;
      for (const e of accountsMeanwhile) write(formatOther(e));
      try {
        const replayed = new Set<number>();
        const lastEventId = parseLastEventId(req.headers['last-event-id']);
        if (lastEventId !== null) {
          for (const e of await hub.replay(lastEventId, tenantId, REPLAY_LIMIT)) {
            replayed.add(e.id);
            write(formatRunEvent(e));
          }
        }
        const live = buffered;
        buffered = null;
        for (const e of live) if (!replayed.has(e.id)) write(formatRunEvent(e));
      } catch (err) {
        req.log.warn({ err }, 'event replay failed; closing the stream so the client retries');
        raw.destroy();
      }
    },
  );
};
