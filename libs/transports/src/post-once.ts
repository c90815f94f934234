import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { Dispatcher } from 'undici';
import { MAX_ANSWER_BYTES } from './bounded-answer.js';
import type { HttpPool } from './http-pool.js';

/** A request that got no answer. `written`: the whole request left this process (a send may have happened: `unknown`). */
export interface RequestFailure {
  failure: true;
  code: string;
  written: boolean;
  message: string;
}

/** An answer over MAX_ANSWER_BYTES: only its status was read, its body was cut off unread. */
export interface OversizedAnswer {
  oversized: true;
  status: number;
}

export interface RequestTarget {
  path: string;
  /** `user:password` when the base URL had credentials: sent as Basic authorization, as node:http did */
  auth?: string;
}

export interface PostOnce<T> {
  pool: HttpPool;
  method?: 'GET' | 'POST';
  /** building it may throw (a value node refuses): nothing is written then */
  target: () => RequestTarget;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  answer: (status: number, body: Buffer) => T;
  notBuiltCode: string;
  scrub?: (text: string) => string;
  onWritten?: () => void;
}

/** undici's code for a connection that closed without an error of its own: node:http's ECONNRESET ("socket hang up") */
const SOCKET_CLOSED = 'UND_ERR_SOCKET';

/**
 * POSTs once and never throws. `written` is set only once the request's last byte went out (HttpPool), and every error after
 * an answer began counts as written: it tells a send that may have reached the platform (`unknown`) from one that did not.
 */
export function postOnce<T>(p: PostOnce<T>): Promise<T | OversizedAnswer | RequestFailure> {
  const scrub = p.scrub ?? ((text: string) => text);
  return new Promise((resolve) => {
    let written = false;
    const wrote = () => {
      if (written) return;
      written = true;
      p.onWritten?.();
    };
    let answered = false;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let abort: ((error: Error) => void) | undefined;
    const done = (value: T | OversizedAnswer | RequestFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const fail = (e: NodeJS.ErrnoException) => {
      const code = e.code === SOCKET_CLOSED ? 'ECONNRESET' : (e.code ?? 'network_error');
      done({ failure: true, code, written: written || answered, message: scrub(String(e.message)) });
    };
    const stop = () => abort?.(new Error('request ended by the client'));

    let request: Dispatcher.DispatchOptions;
    try {
      const target = p.target();
      // node:http refused such headers before sending (NOT_BUILDABLE_CODES); undici would send some mangled, so the same checks.
      const headers: string[] = [];
      for (const name in p.headers) {
        const value = p.headers[name]!;
        validateHeaderName(name);
        validateHeaderValue(name, value);
        headers.push(name, value);
      }
      if (target.auth !== undefined && !('authorization' in p.headers)) {
        headers.push('authorization', `Basic ${Buffer.from(target.auth).toString('base64')}`);
      }
      const body = p.method === 'GET' ? null : p.pool.watch(p.body, wrote);
      request = { method: p.method ?? 'POST', path: target.path, headers, body };
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      return done({ failure: true, code: e.code ?? p.notBuiltCode, written: false, message: scrub(String(e.message)) });
    }

    timer = setTimeout(() => {
      done({ failure: true, code: 'timeout', written, message: `no answer within ${p.timeoutMs} ms` });
      stop();
    }, p.timeoutMs);

    let status = 0;
    const chunks: Buffer[] = [];
    let size = 0;
    const oversized = () => {
      done({ oversized: true, status });
      stop();
    };
    const handler: Dispatcher.DispatchHandler & { onRequestSent: () => void } = {
      // undici sends an empty body as none, so such a request ends with its headers, which the socket takes at once
      onRequestSent: () => {
        if (p.body.length === 0) wrote();
      },
      onConnect: (abortRequest) => {
        abort = abortRequest;
        if (settled) stop();
      },
      onHeaders: (statusCode, rawHeaders) => {
        answered = true;
        status = statusCode;
        if (declaredLength(rawHeaders) > MAX_ANSWER_BYTES) oversized();
        return true;
      },
      onData: (chunk) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) oversized();
        else chunks.push(chunk);
        return true;
      },
      onComplete: () => done(p.answer(status, Buffer.concat(chunks, size))),
      onError: fail,
    };
    p.pool.dispatch(request, handler);
  });
}

function declaredLength(rawHeaders: Buffer[] | string[] | null | undefined): number {
  if (!rawHeaders) return 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toString().toLowerCase() === 'content-length') {
      const declared = Number(rawHeaders[i + 1]!.toString());
      return Number.isFinite(declared) ? declared : 0;
    }
  }
  return 0;
}
