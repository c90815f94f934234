import type { Logger } from 'pino';

/**
 * Routes the console into the log, text arguments only: libsignal (under Baileys) prints Signal sessions, private keys
 * included, through `console.info`/`console.warn`, and no such object may reach the logs.
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
