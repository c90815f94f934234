// Writes test/durations.json, the long files test/sequencer.mjs starts first, from one or more
// full runs of bench/test-time.mjs: each file's seconds (the largest of the runs given), for
// the files that took at least --min seconds (5 unless told), longest first.
//   node bench/test-durations.mjs [--min 5] bench/results/test-time-<label>.json…
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const minAt = argv.indexOf('--min');
const min = minAt === -1 ? 5 : Number(argv[minAt + 1]);
if (minAt !== -1) argv.splice(minAt, 2);
const runs = argv;
if (runs.length === 0) {
  console.error('usage: node bench/test-durations.mjs [--min 5] bench/results/test-time-<label>.json…');
  process.exit(2);
}
const seconds = new Map();
for (const run of runs) {
  for (const f of JSON.parse(readFileSync(run, 'utf8')).files) seconds.set(f.file, Math.max(seconds.get(f.file) ?? 0, f.seconds));
}
const kept = [...seconds].filter(([, s]) => s >= min).sort((a, b) => b[1] - a[1]);
const out = path.join(ROOT, 'test', 'durations.json');
writeFileSync(out, `${JSON.stringify(Object.fromEntries(kept.map(([f, s]) => [f, Math.round(s)])), null, 2)}\n`);
console.log(`${kept.length} of ${seconds.size} files (≥ ${min} s) written to ${path.relative(ROOT, out)}`);
