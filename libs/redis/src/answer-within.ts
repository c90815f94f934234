export class NoAnswerError extends Error {
  constructor(what: string, ms: number) {
    super(`${what}: no answer from Redis within ${ms} ms`);
    this.name = 'NoAnswerError';
  }
}

/** `work`, or a NoAnswerError `ms` after the call; the deadline yields to I/O once, so an answer already on the socket is read (ioredis' commandTimeout does not). */
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
