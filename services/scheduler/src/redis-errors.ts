import type { Logger } from '@metronome/observability';

/**
 * An `error` listener for the scheduler's Redis connection: each error is one JSON log line.
 * While Redis is away the connection retries several times a second and fails the same way
 * each time, so a repeat of the previous error is logged at most once per `everyMs`; each line
 * says how many errors went unlogged since the line before (`suppressed`).
 */
export function redisErrorLog(logger: Logger, now: () => number, everyMs = 10_000): (error: Error) => void {
  let last = '';
  let lastAt = 0;
  let suppressed = 0;
  return (error) => {
    const key = `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}`;
    const at = now();
    if (key === last && at - lastAt < everyMs) {
      suppressed++;
      return;
    }
    logger.warn({ err: error, suppressed }, 'redis connection error');
    last = key;
    lastAt = at;
    suppressed = 0;
  };
}
