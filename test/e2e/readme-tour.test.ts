// The README's tour, run as written: its ```sh block under "A tour of the API", in bash with
// `set -euo pipefail`, from the repository's root, against a running stack. Only API and ADMIN
// come from the environment, as the block's first lines allow. A command that fails, a file
// the tour names that is missing, or an answer it cannot parse stops the script and fails here.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { received } from '../helpers/platform-record.js';
import { startStack, type Stack } from '../helpers/stack.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let stack: Stack | undefined;

afterAll(async () => {
  await stack?.stop();
});

function tourScript(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A tour of the API'));
  const block = /```sh\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 5)));
  if (!block) throw new Error('README.md: no ```sh block under "## A tour of the API"');
  return block[1]!;
}

test('every command of the README tour runs as written, and the platform receives its messages', async () => {
  for (const tool of ['curl', 'jq']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) throw new Error(`the README tour needs ${tool}: run \`sudo apt-get install -y ${tool}\``);
  }
  stack = await startStack({ senders: 1 });
  const script = tourScript();
  const run = spawnSync('bash', ['-c', `set -euo pipefail\n${script}`], {
    cwd: ROOT,
    env: { ...process.env, API: stack.apiUrl, ADMIN: stack.adminToken },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const output = `${run.stdout}\n${run.stderr}`;
  if (run.status !== 0) throw new Error(`the tour stopped (exit ${run.status ?? run.signal}):\n${output}`);

  // what the tour's commands print, in order
  expect(output).toMatch(/"scheduledAt":/); // the occurrences preview
  expect(output).toMatch(/"status":"success","counts":\{"total":3,[^}]*"sent":3/);
  expect(output).toMatch(/"reason":"interval_gate"/); // run now, with every chat inside its interval
  expect(output).toMatch(/"status":"paused"/);
  expect(output).toMatch(/"status":"queued"/); // resumed
  expect(output).toMatch(/"status":"cancelled".*"skipped":3/);
  expect(output).toMatch(/"code":"conflict"/); // retry-failed with nothing to retry
  expect(output).toMatch(/^retry: \d+/m); // the event stream opened

  // the platform got the tour's text and image from the tour's account
  const messages = await received(stack);
  expect(messages.some((m) => m.part.type === 'text' && m.part.text === 'Hello')).toBe(true);
  expect(messages.some((m) => m.part.type === 'media')).toBe(true);
}, 120_000);
