// What the services run from: every library's and service's `src/**/*.ts` (tests and fixtures
// aside) as `dist/**/*.js` with a source map, the types stripped by swc (the same transform jest
// runs the sources through: infra/swc-options.mjs). Type checking is separate and checks the
// whole tree at once (`npm run check`, `tsconfig.json`): emitting takes about a second where
// `tsc -b` took half a minute, and nothing runs from declarations any more.
//   node infra/build.mjs [--clean]
// A file whose output is unchanged is not written again, and a changed one is written beside
// and renamed into place: a service starting from dist while a build runs (a test's `npm start`
// beside other files' stacks) never reads half a file.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformFile } from '@swc/core';
import { swcOptions } from './swc-options.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['libs', 'services'].flatMap((group) => readdirSync(path.join(ROOT, group)).map((name) => path.join(ROOT, group, name)));

const isSource = (file) => file.endsWith('.ts') && !/\.(test|fixture|d)\.ts$/.test(file);

function sourcesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && isSource(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

/** Writes `text` to `file` unless it holds it already; atomically (a rename) when it does not. */
function writeIfChanged(file, text) {
  if (existsSync(file) && readFileSync(file, 'utf8') === text) return false;
  mkdirSync(path.dirname(file), { recursive: true });
  const beside = `${file}.${process.pid}.tmp`;
  writeFileSync(beside, text);
  renameSync(beside, file);
  return true;
}

async function emit(pkg, source) {
  const out = path.join(pkg, 'dist', path.relative(path.join(pkg, 'src'), source)).replace(/\.ts$/, '.js');
  const mapName = `${path.basename(out)}.map`;
  const { code, map } = await transformFile(source, {
    ...swcOptions,
    sourceMaps: true,
    // the map names its source relative to itself, as tsc's did
    sourceFileName: path.relative(path.dirname(out), source),
  });
  const wrote = writeIfChanged(out, `${code}\n//# sourceMappingURL=${mapName}\n`);
  writeIfChanged(`${out}.map`, map);
  return wrote;
}

if (process.argv.includes('--clean')) {
  for (const pkg of PACKAGES) rmSync(path.join(pkg, 'dist'), { recursive: true, force: true });
} else {
  const started = performance.now();
  const jobs = PACKAGES.flatMap((pkg) => sourcesUnder(path.join(pkg, 'src')).map((source) => emit(pkg, source)));
  const written = (await Promise.all(jobs)).filter(Boolean).length;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`built ${jobs.length} modules into dist/ (${written} changed) in ${seconds} s`);
}
