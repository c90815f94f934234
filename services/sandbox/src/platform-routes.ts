// The HTTP platform protocol of CONTRACT §5: media upload and message send.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerKey, type ApiKeys } from './api-keys.js';
import { describeIssues, idempotencyKey, sendBody } from './schemas.js';
import type { Answer } from './platform-types.js';
import type { SandboxReceipts } from './receipts.js';
import type { SandboxState } from './state.js';

export interface PlatformDeps {
  state: SandboxState;
  keys: ApiKeys;
  clock: () => number;
  /** how much earlier than now a request being stamped may have come (loop-watch.ts); 0 on a fake clock */
  stampSlackMs: () => number;
  sleep: (ms: number) => Promise<void>;
  receipts: SandboxReceipts;
}

/** Media bodies may be any type up to this size, including JSON, so they get their own parser. */
export const MEDIA_BODY_LIMIT = 64 * 1024 * 1024;

export async function platformRoutes(app: FastifyInstance, deps: PlatformDeps): Promise<void> {
  const { state, clock, keys, stampSlackMs } = deps;

  /**
   * The API key check every platform request passes first (CONTRACT §5): a missing key, or one
   * that is not the account's, is `401 {"error":"unauthorized"}` and nothing else happens. Then
   * the fake echo fault, when a test turned it on for the account.
   */
  const refusal = (req: FastifyRequest, attempt: { account: string; chatId?: string | null }, now: number): Answer | null => {
    const verdict = keys.check(attempt.account, bearerKey(req.headers.authorization));
    if (verdict === 'missing' || verdict === 'wrong') {
      const detail = verdict === 'missing' ? 'Authorization: Bearer <api key> required' : "not this account's API key";
      return state.refuse(attempt, { reason: 'unauthorized', status: 401, error: 'unauthorized', detail }, now);
    }
    if (!keys.fakeEcho(attempt.account)) return null;
    const echo = `fake echo fault: the request carried Authorization: ${req.headers.authorization ?? ''}`;
    return state.refuse(attempt, { reason: 'fault', status: 500, error: 'internal_error', detail: echo, message: echo }, now);
  };

  // Latency is read per request so PUT /sandbox/config applies to the next send.
  const answer = async (reply: FastifyReply, a: Answer) => {
    await deps.sleep(state.config().latencyMs + a.hangMs);
    if (a.seq !== undefined) state.answered(a.seq, clock());
    return reply.code(a.status).send(a.body);
  };

  await app.register(async (media) => {
    // Encapsulated: the default JSON parser must not turn an uploaded .json file into an object.
    media.removeAllContentTypeParsers();
    media.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MEDIA_BODY_LIMIT }, (_req, body, done) => done(null, body));

    media.post<{ Params: { account: string } }>('/v1/accounts/:account/media', async (req, reply) => {
      const refused = refusal(req, { account: req.params.account }, clock());
      if (refused) return answer(reply, refused);
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const declared = req.headers['x-media-sha256'];
      const a = state.upload(
        {
          account: req.params.account,
          declaredSha256: typeof declared === 'string' ? declared : undefined,
          sha256: createHash('sha256').update(body).digest('hex'),
          contentType: req.headers['content-type'] ?? 'application/octet-stream',
          size: body.length,
        },
        clock(),
      );
      return answer(reply, a);
    });
  });

  // The chat directory (CONTRACT §5, protocol extension): the account's chats, a page at a time.
  app.get<{ Params: { account: string }; Querystring: { cursor?: string } }>('/v1/accounts/:account/chats', async (req, reply) => {
    const now = clock();
    const refused = refusal(req, { account: req.params.account }, now);
    if (refused) return answer(reply, refused);
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
    return answer(reply, state.directoryPage(req.params.account, cursor, now));
  });

  app.post<{ Params: { account: string } }>('/v1/accounts/:account/messages', async (req, reply) => {
    const now = clock();
    const slack = stampSlackMs();
    const account = req.params.account;
    const raw = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
    const attempt = { account, chatId: typeof raw['chatId'] === 'string' ? raw['chatId'] : null };
    const refused = refusal(req, attempt, now);
    if (refused) return answer(reply, refused);
    const key = idempotencyKey.safeParse(req.headers['idempotency-key']);
    if (!key.success) return answer(reply, state.rejectInvalid(attempt, 'Idempotency-Key header required (1-4096 characters)', now));
    const body = sendBody.safeParse(req.body);
    if (!body.success) return answer(reply, state.rejectInvalid({ ...attempt, idempotencyKey: key.data }, describeIssues(body.error), now));
    const a = state.send({ ...body.data, account, idempotencyKey: key.data }, now, slack);
    const sent = await answer(reply, a);
    // An accepted message's receipts follow the answer, with the key the send carried.
    if (a.seq !== undefined) {
      const messageId = (a.body as { messageId: string }).messageId;
      deps.receipts.accepted({ account, messageId, chatId: body.data.chatId, bearer: req.headers.authorization ?? null }, now);
    }
    return sent;
  });
}
