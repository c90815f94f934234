import type { AddressInfo } from 'node:net';

/** The two log calls a stopping service makes (a pino logger has them). */
export interface StopLogger {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** The part of `process` a stop needs: tests hand in their own. */
export interface StoppableProcess {
  on(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  exit(code: number): void;
}

/**
 * Every service's stop, written once: on the first SIGTERM or SIGINT it logs `stopping` with
 * the signal, runs `stop`, and exits 0 when it resolves, or logs `<service> close failed` and
 * exits 1 when it throws. A second signal while stopping changes nothing (the first one's
 * drain goes on). Call it before the service says it is ready: a signal right after that line
 * must drain, not kill.
 */
export function stopOnSignals(service: string, logger: StopLogger, stopping: string, stop: (signal: string) => Promise<void>, proc: StoppableProcess = process): void {
  let started = false;
  const onSignal = (signal: 'SIGTERM' | 'SIGINT') => {
    if (started) return;
    started = true;
    logger.info({ signal }, stopping);
    stop(signal).then(
      () => proc.exit(0),
      (err: unknown) => {
        logger.error({ err }, `${service} close failed`);
        proc.exit(1);
      },
    );
  };
  proc.on('SIGTERM', () => onSignal('SIGTERM'));
  proc.on('SIGINT', () => onSignal('SIGINT'));
}

/**
 * The address a listening server answers on, for its "listening" log line: the bound port
 * (the configured one may be 0, a free port) and a URL whose IPv6 host is bracketed.
 */
export function listeningAt(address: AddressInfo | string | null, host: string, configuredPort: number): { url: string; port: number } {
  const port = typeof address === 'object' && address !== null ? address.port : configuredPort;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, port };
}
