import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The leak check proven able to fail, in every run of the suite: jest, run on the file that leaves
// a Redis and a PostgreSQL connection open (test/leak-check/leaks.test.ts, which only does so
// under LEAK_CHECK_SELF_TEST=1), must fail it and name both connections.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('a file that leaves a Redis and a PostgreSQL connection open fails, both named', () => {
  const run = spawnSync(
    process.execPath,
    [
      '--experimental-vm-modules',
      '--disable-warning=ExperimentalWarning',
      'node_modules/jest/bin/jest.js',
      '--ci',
      '--forceExit',
      'test/leak-check/leaks.test.ts',
    ],
    { cwd: ROOT, env: { ...process.env, LEAK_CHECK_SELF_TEST: '1' }, encoding: 'utf8', timeout: 120_000 },
  );
  const output = `${run.stdout}\n${run.stderr}`;
  expect({ status: run.status, failedFile: /FAIL .*test\/leak-check\/leaks\.test\.ts/.test(output) }).toEqual({ status: 1, failedFile: true });
  expect(output).toContain("connections left open after the file's afterAll");
  expect(output).toMatch(/Redis connection .*test-deliberate-leak/);
  expect(output).toMatch(/PostgreSQL connection to postgres \(test-deliberate-leak\)/);
}, 150_000);
