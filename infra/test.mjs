// `npm test [-- jest arguments]`: what the services run from first (infra/build.mjs, about a
// second, and the console's bundle), then jest, and beside it the checks no running code needs:
// the type check of every library, service and test, the console's, and Biome (format and
// lint). Those take a core for some 30 s, which the first, mostly waiting end-to-end files
// leave free; run before jest they held it back as long. Fails when jest or any check fails; a
// check's output is printed when it ends.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);

/** A step that must pass before jest starts: its output goes straight to the terminal. */
function before(name, command, args) {
  const r = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`✗ ${name} failed: see above.`);
    process.exit(r.status ?? 1);
  }
}

/** A check beside jest: its output is held and printed at once when it ends, so it does not cut into jest's. */
function beside(name, command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    child.on('close', (code) => {
      const text = Buffer.concat(out).toString().trim();
      if (code === 0) process.stdout.write(`✓ ${name}\n`);
      else process.stdout.write(`✗ ${name} failed:\n${text}\n`);
      resolve({ name, ok: code === 0 });
    });
  });
}

before('the build (infra/build.mjs)', process.execPath, ['infra/build.mjs']);
before('the console bundle', process.execPath, ['console/scripts/build.mjs']);

const checks = Promise.all([
  beside('the type check (infra/type-check.mjs)', process.execPath, ['infra/type-check.mjs']),
  beside('format and lint (biome ci)', bin('biome'), ['ci', '.']),
]);
const jest = await new Promise((resolve) => {
  const child = spawn(
    process.execPath,
    ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', 'node_modules/jest/bin/jest.js', ...process.argv.slice(2)],
    { cwd: ROOT, stdio: 'inherit' },
  );
  // a terminal's Ctrl-C reaches jest (same process group); a TERM to this process is passed on
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
});
const failed = (await checks).filter((c) => !c.ok);
for (const c of failed) console.error(`✗ ${c.name} failed (its output is above)`);
process.exit(jest !== 0 ? jest : failed.length ? 1 : 0);
