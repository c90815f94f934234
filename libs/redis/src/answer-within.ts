/** Redis did not answer in time. */
export class NoAnswerError extends Error {
  constructor(what: string, ms: number) {
    super(`${what}: no answer from Redis within ${ms} ms`);
    this.name = 'NoAnswerError';
  }
}

/**
 * `work`, or a NoAnswerError when it has not settled `ms` after the call. The deadline yields
 * to I/O once before it rejects (a setImmediate runs after the event loop's poll phase): when
 * the process was busy past the deadline, an answer already waiting on the socket is read
 * first, so a burst of requests is not mistaken for a hung Redis. ioredis' own
 * `commandTimeout` fires from the timers phase, before that read.
 */
export function answerWithin<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (!settled) {
          settled = true;
          reject(new NoAnswerError(what, ms));
        }
      });
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        reject(err);
      },
    );
  });
}
