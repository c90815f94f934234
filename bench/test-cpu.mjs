// CPU per test file, child processes included: each file runs alone in its own jest process
// (in band, so the services, Chromium and scripts a file starts are that process's children and
// their CPU is counted when jest exits). Writes bench/results/test-cpu-<label>.json and prints
// the files by CPU. Run after `npm run build`; the transform cache is shared by the files of one
// run, so only the first file pays the cold transform of the modules they share.
//   node bench/test-cpu.mjs [--label name] [-- jest path patterns…]   e.g. -- test/e2e test/console
//   node bench/test-cpu.mjs --report bench/results/test-cpu-<label>.json
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const dashdash = argv.indexOf('--');
const own = dashdash === -1 ? argv : argv.slice(0, dashdash);
const patterns = dashdash === -1 ? [] : argv.slice(dashdash + 1);
const option = (name, fallback) => (own.includes(name) ? own[own.indexOf(name) + 1] : fallback);
const JEST = ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', path.join(ROOT, 'node_modules/jest/bin/jest.js')];

/** user+system CPU seconds of the waited-for children of this process (/proc/self/stat). */
function childrenCpu() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

function print(run) {
  const total = run.files.reduce((s, f) => s + f.cpu, 0);
  console.log(
    `${run.label}: ${run.date}, ${run.files.length} files, CPU ${total.toFixed(1)} s, load ${run.loadBefore.toFixed(2)} before, ${run.loadAfter.toFixed(2)} after`,
  );
  for (const f of [...run.files].sort((a, b) => b.cpu - a.cpu)) {
    console.log(`  ${f.cpu.toFixed(1).padStart(6)} s CPU ${f.wall.toFixed(1).padStart(6)} s wall  ${f.passed ? 'pass' : 'FAIL'}  ${f.file}`);
  }
}

if (own.includes('--report')) {
  print(JSON.parse(readFileSync(option('--report'), 'utf8')));
  process.exit(0);
}

const label = option('--label', 'run');
const listed = execFileSync(process.execPath, [...JEST, '--listTests', ...patterns], { cwd: ROOT, encoding: 'utf8' });
const files = listed
  .split('\n')
  .filter(Boolean)
  .map((f) => path.relative(ROOT, f))
  .sort();
const cache = mkdtempSync(path.join(tmpdir(), 'test-cpu-'));
const run = { label, date: new Date().toISOString(), patterns, loadBefore: loadavg()[0], files: [] };
for (const file of files) {
  const cpuBefore = childrenCpu();
  const started = performance.now();
  let output = '';
  const code = await new Promise((resolve) => {
    const args = [...JEST, '-i', `--cacheDirectory=${cache}`, '--silent', `^${path.join(ROOT, file).replaceAll('.', '\\.')}$`];
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.on('data', (chunk) => (output = (output + chunk).slice(-4000)));
    child.on('exit', (c) => resolve(c ?? 1));
  });
  const entry = { file, cpu: childrenCpu() - cpuBefore, wall: (performance.now() - started) / 1000, passed: code === 0, load: loadavg()[0] };
  // the end of a failed file's report, to tell a real failure from one of the machine's load
  if (code !== 0) entry.failure = output.slice(-1500);
  run.files.push(entry);
  console.log(`${entry.cpu.toFixed(1).padStart(6)} s CPU ${entry.wall.toFixed(1).padStart(6)} s wall  ${entry.passed ? 'pass' : 'FAIL'}  ${file}`);
}
rmSync(cache, { recursive: true, force: true });
run.loadAfter = loadavg()[0];
mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
const out = path.join(ROOT, 'bench', 'results', `test-cpu-${label}.json`);
writeFileSync(out, `${JSON.stringify(run, null, 2)}\n`);
print(run);
console.log(`written to ${path.relative(ROOT, out)}`);
