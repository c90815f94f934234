import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from './errors.js';

// A body over its route's limit is answered at once (413, Connection: close), and the socket is
// closed only once the rest of the body is read and thrown away, as nginx's lingering close does:
// closing with bytes unread makes the kernel reset the connection, and a client still writing
// (Node's http) then fails with EPIPE before it reads the answer. The rest is never buffered, and
// the drain is bounded in bytes and in time: past either, the socket closes as before.

/** The largest body a JSON route takes unless it sets its own; `GET /v1/me` tells it. */
// A campaign of 10,000 targets of 256 characters is about 2.6 MB of JSON.
export const JSON_BODY_LIMIT = 4 * 1024 * 1024;

/** Bytes read after the answer: DRAIN_FACTOR times the route's limit, at most DRAIN_MAX_BYTES. */
const DRAIN_FACTOR = 4;
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
/** How long a client has to finish its body (or stop sending) after the answer. */
const LINGER_MS = 10_000;

/** The 413 for a body over `limit` bytes: the body is the field, the limit in its message. */
export function bodyTooLarge(limit: number): ApiError {
  return new ApiError(413, 'too_large', `the request body is larger than ${limit} bytes`, [{ field: 'body', message: `at most ${limit} bytes` }]);
}

/**
 * Sends `error` now, ending the response (and so the connection) only when the request's body
 * has been read to its end, the client has gone, or a bound is met. For a request whose body is
 * not read to its end; one read whole gets the ordinary answer.
 */
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
