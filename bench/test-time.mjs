// Where the test suite's time goes. Runs jest as `npm test` does (after `npm run build`), with
// an empty transform cache as a clean clone has, and writes bench/results/test-time-<label>.json:
// wall time, the CPU time of jest and every process it waited for, load averages, each file's
// time (jest's perfStats), totals per folder. Prints the slowest files.
//   node bench/test-time.mjs [--label name] [--warm] [--top 20] [-- jest arguments…]
//   node bench/test-time.mjs --report bench/results/test-time-<label>.json   (print a saved run)
// CPU is the figure to compare while others share the machine; wall time moves with the load.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { loadavg, tmpdir, availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const argv = process.argv.slice(2);
const dashdash = argv.indexOf('--');
const own = dashdash === -1 ? argv : argv.slice(0, dashdash);
const jestArgs = dashdash === -1 ? [] : argv.slice(dashdash + 1);
const option = (name, fallback) => {
  const at = own.indexOf(name);
  return at === -1 ? fallback : own[at + 1];
};
const top = Number(option('--top', '20'));

/** user+system CPU seconds of the waited-for children of this process (/proc/self/stat). */
function childrenCpu() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[13], fields[14] are cutime and cstime (stat fields 16 and 17), in clock ticks
  return { user: Number(fields[13]) / 100, system: Number(fields[14]) / 100 };
}

/**
 * CPU seconds of the shared servers the tests use (not children of jest, so not in
 * childrenCpu): PostgreSQL's postmaster with the backends it reaped, and Redis on 6379.
 * Other users of those servers count too: read it on a quiet machine. null where unreadable.
 */
function serversCpu() {
  const cpuOf = (pid, withChildren) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(f[11]) + Number(f[12]) + (withChildren ? Number(f[13]) + Number(f[14]) : 0);
      return ticks / 100;
    } catch {
      return null;
    }
  };
  const pidOf = (name) => {
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        if (name === 'postgres' && /postgres$/.test(cmd[0]) && cmd.includes('-D')) return pid;
        if (name === 'redis' && /redis-server/.test(cmd[0]) && cmd.join(' ').includes(':6379')) return pid;
      } catch {}
    }
    return null;
  };
  const pg = pidOf('postgres');
  const redis = pidOf('redis');
  return { postgres: pg && cpuOf(pg, true), redis: redis && cpuOf(redis, false) };
}

function tierOf(file) {
  const rel = path.relative(ROOT, file);
  const parts = rel.split(path.sep);
  return parts[0] === 'test' ? parts.slice(0, parts.length > 2 ? 2 : 1).join('/') : `${parts[0]}/${parts[1]} (unit)`;
}

function summarize(run) {
  const files = run.files;
  const byTier = new Map();
  for (const f of files) {
    const t = byTier.get(f.tier) ?? { files: 0, seconds: 0, cpu: 0 };
    t.files += 1;
    t.seconds += f.seconds;
    t.cpu += f.cpu ?? 0;
    byTier.set(f.tier, t);
  }
  const sum = files.reduce((s, f) => s + f.seconds, 0);
  const lines = [
    `${run.label}: ${run.date}, ${run.files.length} files, ${run.tests.passed}/${run.tests.total} tests passed` +
      (run.tests.failedFiles.length ? `, FAILED files: ${run.tests.failedFiles.join(', ')}` : ''),
    `wall ${run.wallSeconds.toFixed(1)} s, CPU ${run.cpu.user.toFixed(1)} s user + ${run.cpu.system.toFixed(1)} s system` +
      (run.serversCpu ? `; PostgreSQL ${run.serversCpu.postgres} s, Redis ${run.serversCpu.redis} s` : '') +
      `, load ${run.loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${run.loadAfter.map((l) => l.toFixed(2)).join(' ')} after`,
    `sum of file times ${sum.toFixed(1)} s (${(sum / run.wallSeconds).toFixed(2)} files running on average)`,
    '',
    'per folder (files, summed seconds, summed CPU seconds of the integration files):',
    ...[...byTier]
      .sort((a, b) => b[1].seconds - a[1].seconds)
      .map(([t, v]) => `  ${t.padEnd(28)} ${String(v.files).padStart(3)}  ${v.seconds.toFixed(1).padStart(7)}  ${v.cpu.toFixed(1).padStart(7)}`),
    '',
    `slowest ${top} files (seconds, tests):`,
    ...[...files]
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, top)
      .map((f) => `  ${f.seconds.toFixed(1).padStart(6)}  ${String(f.tests).padStart(3)}  ${f.file}`),
    ...(files.some((f) => f.cpu !== null && f.cpu !== undefined)
      ? [
          '',
          `most CPU, ${top} files (CPU seconds of the worker and what it started, seconds):`,
          ...[...files]
            .filter((f) => f.cpu != null)
            .sort((a, b) => b.cpu - a.cpu)
            .slice(0, top)
            .map((f) => `  ${f.cpu.toFixed(1).padStart(6)}  ${f.seconds.toFixed(1).padStart(6)}  ${f.file}`),
        ]
      : []),
  ];
  return lines.join('\n');
}

if (own.includes('--report')) {
  console.log(summarize(JSON.parse(readFileSync(option('--report'), 'utf8'))));
  process.exit(0);
}

const label = option('--label', 'run');
const scratch = mkdtempSync(path.join(tmpdir(), 'test-time-'));
const jsonOut = path.join(scratch, 'jest.json');
const args = [
  '--experimental-vm-modules',
  '--disable-warning=ExperimentalWarning',
  path.join(ROOT, 'node_modules/jest/bin/jest.js'),
  '--json',
  `--outputFile=${jsonOut}`,
  ...(own.includes('--warm') ? [] : [`--cacheDirectory=${path.join(scratch, 'cache')}`]),
  ...jestArgs,
];
const loadBefore = loadavg();
const cpuBefore = childrenCpu();
const serversBefore = serversCpu();
const started = performance.now();
const cpuLog = path.join(scratch, 'cpu.ndjson');
const code = await new Promise((resolve) => {
  spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, METRONOME_TEST_CPU_LOG: cpuLog } }).on(
    'exit',
    (c) => resolve(c ?? 1),
  );
});
const wallSeconds = (performance.now() - started) / 1000;
const cpuAfter = childrenCpu();
const serversAfter = serversCpu();
const delta = (k) => (serversBefore[k] === null || serversAfter[k] === null ? null : Math.round((serversAfter[k] - serversBefore[k]) * 100) / 100);
const report = JSON.parse(readFileSync(jsonOut, 'utf8'));
// each integration file's CPU: its worker's and the processes it started (test/leak-check/leak-environment.mjs)
const cpuOfFile = new Map(
  existsSync(cpuLog)
    ? readFileSync(cpuLog, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .map((e) => [e.file, e.cpu])
    : [],
);
rmSync(scratch, { recursive: true, force: true });

const run = {
  label,
  date: new Date().toISOString(),
  cores: availableParallelism(),
  jestArgs,
  exitCode: code,
  wallSeconds,
  cpu: { user: cpuAfter.user - cpuBefore.user, system: cpuAfter.system - cpuBefore.system },
  // the shared PostgreSQL and Redis (user + system), beside jest's own
  serversCpu: { postgres: delta('postgres'), redis: delta('redis') },
  loadBefore,
  loadAfter: loadavg(),
  tests: {
    total: report.numTotalTests,
    passed: report.numPassedTests,
    failedFiles: report.testResults.filter((r) => r.status === 'failed').map((r) => path.relative(ROOT, r.name)),
  },
  files: report.testResults.map((r) => ({
    file: path.relative(ROOT, r.name),
    tier: tierOf(r.name),
    seconds: (r.endTime - r.startTime) / 1000,
    tests: r.assertionResults.length,
    cpu: cpuOfFile.get(r.name) ?? null,
    startOffset: (r.startTime - report.startTime) / 1000,
  })),
};
mkdirSync(RESULTS, { recursive: true });
const out = path.join(RESULTS, `test-time-${label}.json`);
writeFileSync(out, `${JSON.stringify(run, null, 2)}\n`);
console.log(`\n${summarize(run)}\n\nwritten to ${path.relative(ROOT, out)}`);
process.exit(code);
