import type http from 'node:http';
import type { RequestTarget } from './request-target.js';

/** A request that got no answer. `written`: the whole request left this process (a send may have happened: `unknown`). */
export interface RequestFailure {
  failure: true;
  code: string;
  written: boolean;
  message: string;
}

export interface PostOnce<T> {
  /** where to, built once per destination (request-target.ts); building it may throw (a value node refuses): nothing is written then */
  target: () => RequestTarget;
  agent: http.Agent;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  /** reads the answer; a failure while reading comes after the request was written */
  read: (res: http.IncomingMessage, done: (value: T) => void, fail: (e: NodeJS.ErrnoException) => void) => void;
  /** the code when building the request threw without one */
  notBuiltCode: string;
  /** takes secrets out of an error message (a bot token in a URL) */
  scrub?: (text: string) => string;
}

/**
 * POSTs once and never throws: the answer as `read` makes it, or a failure that says whether
 * the request had been written. Whether it was written is what tells a send that may have
 * reached the platform (`unknown`) from one that surely did not (retried): it is set only once
 * the request's last byte went out ('finish'), and every error after an answer began counts as
 * written. Both platforms' HTTP clients send through this one function.
 */
export function postOnce<T>(p: PostOnce<T>): Promise<T | RequestFailure> {
  const scrub = p.scrub ?? ((text: string) => text);
  return new Promise((resolve) => {
    let written = false;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (value: T | RequestFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const fail = (e: NodeJS.ErrnoException) => done({ failure: true, code: e.code ?? 'network_error', written, message: scrub(String(e.message)) });
    let req: http.ClientRequest;
    try {
      const { request, options: to } = p.target();
      // One options object of one shape, no URL: see request-target.ts for what that saves on every send.
      const headers = { ...p.headers, 'content-length': String(p.body.length) };
      const options = { protocol: to.protocol, hostname: to.hostname, port: to.port, path: to.path, auth: to.auth, method: 'POST', agent: p.agent, headers };
      req = request(options, (res) =>
        p.read(res, done, (e) => {
          written = true;
          fail(e);
        }),
      );
    } catch (error) {
      // node:http throws at once on a request it cannot build: nothing left this process, so
      // this is never `unknown`.
      const e = error as NodeJS.ErrnoException;
      return done({ failure: true, code: e.code ?? p.notBuiltCode, written: false, message: scrub(String(e.message)) });
    }
    timer = setTimeout(() => {
      done({ failure: true, code: 'timeout', written, message: `no answer within ${p.timeoutMs} ms` });
      req.destroy();
    }, p.timeoutMs);
    req.on('finish', () => {
      written = true;
    });
    req.on('error', fail);
    req.end(p.body);
  });
}
