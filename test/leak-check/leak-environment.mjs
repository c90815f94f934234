// The integration tests' jest environment: node, plus a check that FAILS a test file which
// leaves a PostgreSQL or Redis connection open once its last afterAll has run (the connections
// are noted by track-connections.ts, a setup file).
//
// Why here and not in an afterAll: jest-circus runs afterAll hooks in the order they were
// declared, so one from a setup file would run before the test file's own and see every
// connection still open. `run_finish` comes after all of them. An error added to the run's
// unhandledErrors fails the file, naming the connections. A closed connection may report its end
// a moment after quit() resolves, so the check gives it a second. Plain ESM on the build output,
// like global-setup.mjs: jest loads environments outside its module mapping.
import { appendFileSync, readFileSync } from 'node:fs';
import { TestEnvironment } from 'jest-environment-node';
import { eventually } from '@metronome/testkit';

/**
 * CPU seconds of this jest worker and the processes it started and reaped (a file's services,
 * Prism, npm): user + system, own + children, from /proc/self/stat.
 */
function workerCpu() {
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
}

export default class LeakCheckEnvironment extends TestEnvironment {
  // bench/test-time.mjs sets METRONOME_TEST_CPU_LOG: each file's CPU (its worker's and the
  // processes it started) is appended there as one JSON line, to say where the suite's CPU goes
  #cpuLog = process.env.METRONOME_TEST_CPU_LOG;
  #cpuAtStart = 0;
  #file;

  constructor(config, context) {
    super(config, context);
    this.#file = context.testPath;
  }

  async setup() {
    await super.setup();
    if (this.#cpuLog) this.#cpuAtStart = workerCpu();
  }

  async teardown() {
    await super.teardown();
    if (this.#cpuLog) appendFileSync(this.#cpuLog, `${JSON.stringify({ file: this.#file, cpu: workerCpu() - this.#cpuAtStart })}\n`);
  }

  async handleTestEvent(event, state) {
    if (event.name !== 'run_finish') return;
    const open = this.global.__metronomeOpenConnections;
    if (typeof open !== 'function') return;
    try {
      await eventually('every connection to close', async () => open().length === 0, 1_000, 50);
    } catch {
      state.unhandledErrors.push(new Error(`connections left open after the file's afterAll (close them there):\n  ${open().join('\n  ')}`));
    }
  }
}
