import type { Logger } from 'pino';

/**
 * Libraries that print straight to the console instead of taking a logger: libsignal (under
 * Baileys) prints each Signal session it closes or replaces, the session object with its private
 * keys included, through `console.info`/`console.warn`. A service routes the console into its
 * log instead: each call becomes one line (debug; console.error at warn) carrying its text
 * arguments only, so no object a library prints (keys, sessions, buffers) ever reaches the logs.
 */
export function routeConsoleToLog(logger: Logger): void {
  const line =
    (method: string, level: 'debug' | 'warn') =>
    (...args: unknown[]): void => {
      const texts = args.filter((a) => typeof a === 'string' || typeof a === 'number' || typeof a === 'boolean');
      const dropped = args.length - texts.length;
      logger[level]({ console: method, ...(dropped > 0 && { objectsDropped: dropped }) }, texts.join(' ').slice(0, 500));
    };
  for (const method of ['log', 'info', 'warn', 'debug', 'trace'] as const) console[method] = line(method, 'debug');
  console.error = line('error', 'warn');
}
