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
import { TestEnvironment } from 'jest-environment-node';
import { eventually } from '@metronome/testkit';

export default class LeakCheckEnvironment extends TestEnvironment {
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
