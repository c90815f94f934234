import { EventEmitter } from 'node:events';
import { EXIT_STOP_DEADLINE, listeningAt, settledWithin, STOP_DEADLINE_MS, stopOnSignals } from './service-lifecycle.js';

/** A process stand-in: signals are emitted by the test, exits are recorded. */
function fakeProcess() {
  const emitter = new EventEmitter();
  const exits: number[] = [];
  return {
    emitter,
    exits,
    proc: { on: (signal: 'SIGTERM' | 'SIGINT', listener: () => void) => emitter.on(signal, listener), exit: (code: number) => void exits.push(code) },
  };
}

function recordingLogger() {
  const lines: string[] = [];
  return {
    lines,
    logger: {
      info: (fields: object, message: string) => void lines.push(`info ${message} ${JSON.stringify(fields)}`),
      error: (_fields: object, message: string) => void lines.push(`error ${message}`),
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('stopOnSignals', () => {
  test('the first signal logs, stops once and exits 0; a second signal while stopping changes nothing', async () => {
    const { emitter, exits, proc } = fakeProcess();
    const { lines, logger } = recordingLogger();
    const stops: string[] = [];
    let finish!: () => void;
    stopOnSignals(
      'sandbox',
      logger,
      'sandbox stopping',
      (signal) => {
        stops.push(signal);
        return new Promise<void>((r) => (finish = r));
      },
      proc,
    );
    emitter.emit('SIGTERM');
    emitter.emit('SIGINT');
    await settle();
    expect(stops).toEqual(['SIGTERM']);
    expect(exits).toEqual([]); // still draining
    finish();
    await settle();
    expect(exits).toEqual([0]);
    expect(lines).toEqual([`info sandbox stopping {"signal":"SIGTERM","deadlineMs":${STOP_DEADLINE_MS}}`]);
  });

  test('a stop that throws is logged as a failed close and exits 1', async () => {
    const { emitter, exits, proc } = fakeProcess();
    const { lines, logger } = recordingLogger();
    stopOnSignals('control-api', logger, 'control-api stopping', () => Promise.reject(new Error('pool busy')), proc);
    emitter.emit('SIGINT');
    await settle();
    expect(exits).toEqual([1]);
    expect(lines).toEqual([`info control-api stopping {"signal":"SIGINT","deadlineMs":${STOP_DEADLINE_MS}}`, 'error control-api close failed']);
  });

  test('a stop still running at its deadline is abandoned: logged, exit EXIT_STOP_DEADLINE, once', async () => {
    const emitter = new EventEmitter();
    const exits: number[] = [];
    const exited = new Promise<void>((resolve) => emitter.once('exit', resolve));
    const proc = {
      on: (signal: 'SIGTERM' | 'SIGINT', listener: () => void) => emitter.on(signal, listener),
      exit: (code: number) => void (exits.push(code), emitter.emit('exit')),
    };
    const { lines, logger } = recordingLogger();
    let finish!: () => void;
    // a stop waiting on a dependency that does not answer
    stopOnSignals('sender', logger, 'draining', () => new Promise<void>((r) => (finish = r)), proc, 20);
    emitter.emit('SIGTERM');
    await exited;
    expect(exits).toEqual([EXIT_STOP_DEADLINE]);
    expect(lines[1]).toMatch(/^error sender stop deadline passed/);
    finish(); // the stop ending late exits nothing more
    await settle();
    expect(exits).toEqual([EXIT_STOP_DEADLINE]);
  });
});

describe('settledWithin', () => {
  test('true when the work settles in time, rejected or not; false when it does not', async () => {
    expect(await settledWithin(Promise.resolve(), 1000)).toBe(true);
    expect(await settledWithin(Promise.reject(new Error('x')), 1000)).toBe(true);
    expect(await settledWithin(new Promise(() => undefined), 5)).toBe(false);
  });
});

describe('listeningAt', () => {
  test('the bound port wins over the configured one; an IPv6 host is bracketed', () => {
    const bound = { address: '::1', family: 'IPv6', port: 41234 };
    expect(listeningAt(bound, '::1', 0)).toEqual({ url: 'http://[::1]:41234', port: 41234 });
    expect(listeningAt(bound, '127.0.0.1', 0)).toEqual({ url: 'http://127.0.0.1:41234', port: 41234 });
    expect(listeningAt(null, 'localhost', 3000)).toEqual({ url: 'http://localhost:3000', port: 3000 });
  });
});
