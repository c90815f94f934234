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
 * How long a stop may take before the service exits anyway: under the 10 s an orchestrator
 * commonly grants (docker stop's default), so the service, not a SIGKILL, decides the moment.
 * Only a stop waiting on a dependency that does not answer (Redis, PostgreSQL) runs this long.
 */
export const STOP_DEADLINE_MS = 9_000;

/** The exit code of a stop that ran out of time (0: stopped; 1: a close failed). */
export const EXIT_STOP_DEADLINE = 3;

/**
 * Every service's stop, written once: on the first SIGTERM or SIGINT it logs `stopping` with
 * the signal, runs `stop`, and exits 0 when it resolves, or logs `<service> close failed` and
 * exits 1 when it throws. A stop still running after `deadlineMs` is abandoned: it logs
 * `<service> stop deadline passed` and exits EXIT_STOP_DEADLINE, leaving what it still held to
 * the leases that cover it. A second signal while stopping changes nothing (the first one's
 * drain goes on). Call it before the service says it is ready: a signal right after that line
 * must drain, not kill.
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

/**
 * Waits for `work` at most `ms`: true when it settled (resolved or rejected) in time. For a
 * stop's steps that wait on a dependency which may not answer.
 */
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

/**
 * One step of a stop, waited for at most `ms`: a step that fails or runs out of time is logged
 * (warn, with `step`) and the stop goes on without it.
 */
export async function stopStep(logger: { warn(fields: object, message: string): void }, step: string, work: Promise<unknown>, ms: number): Promise<void> {
  const logged = work.catch((err: unknown) => logger.warn({ err, step }, 'stop step failed: going on without it'));
  if (!(await settledWithin(logged, ms))) logger.warn({ step, waitedMs: ms }, 'stop step unfinished: going on without it');
}

/**
 * The address a listening server answers on, for its "listening" log line: the bound port
 * (the configured one may be 0, a free port) and a URL whose IPv6 host is bracketed.
 */
export function listeningAt(address: AddressInfo | string | null, host: string, configuredPort: number): { url: string; port: number } {
  const port = typeof address === 'object' && address !== null ? address.port : configuredPort;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, port };
}
