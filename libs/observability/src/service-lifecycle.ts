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

/** The default deadline (services read STOP_DEADLINE_MS): under the 10 s docker stop grants, so the service, not a SIGKILL, picks the moment. */
export const STOP_DEADLINE_MS = 9_000;

/** The exit code of a stop that ran out of time (0: stopped; 1: a close failed). */
export const EXIT_STOP_DEADLINE = 3;

/**
 * On the first SIGTERM/SIGINT: log `stopping`, run `stop`, exit 0 (1 if it throws, EXIT_STOP_DEADLINE past `deadlineMs`);
 * later signals change nothing. Call it before the service says it is ready, so a signal right after drains.
 */
export function stopOnSignals(
  service: string,
  logger: StopLogger,
  stopping: string,
  stop: (signal: string) => Promise<void>,
  proc: StoppableProcess = process,
  deadlineMs: number = STOP_DEADLINE_MS,
): void {
  let started = false;
  const onSignal = (signal: 'SIGTERM' | 'SIGINT') => {
    if (started) return;
    started = true;
    logger.info({ signal, deadlineMs }, stopping);
    let exited = false;
    const exit = (code: number) => {
      if (exited) return;
      exited = true;
      clearTimeout(deadline);
      proc.exit(code);
    };
    const deadline = setTimeout(() => {
      logger.error({ deadlineMs }, `${service} stop deadline passed: exiting with what it could not give back left to its leases`);
      exit(EXIT_STOP_DEADLINE);
    }, deadlineMs);
    stop(signal).then(
      () => exit(0),
      (err: unknown) => {
        logger.error({ err }, `${service} close failed`);
        exit(1);
      },
    );
  };
  proc.on('SIGTERM', () => onSignal('SIGTERM'));
  proc.on('SIGINT', () => onSignal('SIGINT'));
}

/** Waits for `work` at most `ms`: true when it settled (resolved or rejected) in time. */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((done) => (timer = setTimeout(() => done(false), Math.max(0, ms))));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** One step of a stop, at most `ms`: a step that fails or runs out of time is logged and the stop goes on. */
export async function stopStep(logger: { warn(fields: object, message: string): void }, step: string, work: Promise<unknown>, ms: number): Promise<void> {
  const logged = work.catch((err: unknown) => logger.warn({ err, step }, 'stop step failed: going on without it'));
  if (!(await settledWithin(logged, ms))) logger.warn({ step, waitedMs: ms }, 'stop step unfinished: going on without it');
}

/** Where a listening server answers: the bound port (the configured one may be 0) and a URL with an IPv6 host bracketed. */
export function listeningAt(address: AddressInfo | string | null, host: string, configuredPort: number): { url: string; port: number } {
  const port = typeof address === 'object' && address !== null ? address.port : configuredPort;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, port };
}
