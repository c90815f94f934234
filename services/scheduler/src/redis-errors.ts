import type { Logger } from '@metronome/observability';

/**
 * An `error` listener for the scheduler's Redis connection: one JSON line per error, a repeat at most once per `everyMs`
 * (`suppressed` counts those left out).
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
