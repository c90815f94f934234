import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError, errorBody } from './errors.js';

// Requests Node's HTTP parser refuses arrive as `clientError`, not at Fastify: answered here in the contract's body, never quoting them.

/** The longest URL the API reads; longer ones are 414 (Node refuses lines past ~16 KiB as 431). */
export const MAX_URL_LENGTH = 8192;

export function clientErrorAnswer(code: string | undefined): ApiError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'request_timeout', 'the request did not arrive in time');
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, 'too_large', 'the request line and headers are larger than this server reads');
    case 'HPE_INVALID_VERSION':
      return new ApiError(505, 'bad_request', 'HTTP version not supported; use HTTP/1.1');
    default:
      return new ApiError(400, 'bad_request', 'the request is not well-formed HTTP/1.1');
  }
}

export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = clientErrorAnswer(err.code);
  // Only the parser's code: the error also carries the raw bytes read, credentials included.
  this.log.debug({ code: err.code, status: answer.statusCode }, 'client error');
  // As Node does: a response already under way on this socket cannot be followed by another.
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !current?.headersSent) {
    const body = JSON.stringify(errorBody(answer.code, answer.message));
    socket.write(
      `HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode] ?? 'Error'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** 414 past MAX_URL_LENGTH, and 505 for a non-1.x request line (Node's parser takes `HTTP/2.0`, which then never got an answer). */
export function installUrlLimit(app: FastifyInstance): void {
  app.addHook('onRequest', async (req) => {
    if (req.raw.httpVersionMajor !== 1) throw new ApiError(505, 'bad_request', 'HTTP version not supported; use HTTP/1.1');
    if (req.url.length > MAX_URL_LENGTH) throw new ApiError(414, 'too_large', `the URL is longer than ${MAX_URL_LENGTH} characters`);
  });
}
