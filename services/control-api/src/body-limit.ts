import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from './errors.js';

// A body over its limit is answered at once (413), and the socket closed only once the rest is drained (as nginx lingers):
// closing with bytes unread resets the connection, and a client still writing gets EPIPE before the answer. Bounded drain.

/** The largest body a JSON route takes unless it sets its own (10,000 targets of 256 characters are ~2.6 MB); `GET /v1/me` tells it. */
export const JSON_BODY_LIMIT = 4 * 1024 * 1024;

const DRAIN_FACTOR = 4;
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const LINGER_MS = 10_000;

export function bodyTooLarge(limit: number): ApiError {
  return new ApiError(413, 'too_large', `the request body is larger than ${limit} bytes`, [{ field: 'body', message: `at most ${limit} bytes` }]);
}

/** Sends `error` now, ending the response only once the body is read, the client has gone, or a bound is met. */
export function answerThenDrain(req: FastifyRequest, reply: FastifyReply, error: ApiError, limit: number): void {
  const body = JSON.stringify(errorBody(error.code, error.message, error.details));
  reply.hijack();
  const res = reply.raw;
  res.writeHead(error.statusCode, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.write(body);

  const incoming = req.raw;
  let left = Math.min(DRAIN_FACTOR * limit, DRAIN_MAX_BYTES);
  const count = (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) close();
  };
  const close = () => {
    clearTimeout(timer);
    incoming.off('data', count).off('end', close).off('close', close);
    res.end();
  };
  const timer = setTimeout(close, LINGER_MS);
  incoming.on('data', count).once('end', close).once('close', close);
  incoming.resume();
}
