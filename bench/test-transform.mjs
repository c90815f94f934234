// The TypeScript transform's share of the test suite: transforms every .ts file jest loads
// (libs/*/src, services/*/src, test) once with ts-jest (the transform before) and once with
// @swc/jest (jest.config.js), in this process, and prints the CPU seconds of each.
//   node bench/test-transform.mjs
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const files = execFileSync('git', ['ls-files', 'libs/*/src/**.ts', 'services/*/src/**.ts', 'test/**.ts'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f.endsWith('.ts'))
  .map((f) => path.join(ROOT, f));
const sources = files.map((f) => [f, readFileSync(f, 'utf8')]);
const jestOptions = {
  config: { rootDir: ROOT, cwd: ROOT, testMatch: [], testRegex: [], extensionsToTreatAsEsm: ['.ts'] },
  supportsStaticESM: true,
  supportsDynamicImport: true,
  supportsTopLevelAwait: true,
  cacheFS: new Map(),
  instrument: false,
};

function cpuOf(name, make) {
  const before = process.cpuUsage();
  const transformer = make();
  for (const [file, src] of sources) transformer.process(src, file, { ...jestOptions, transformerConfig: {} });
  const used = process.cpuUsage(before);
  console.log(`${name.padEnd(8)} ${((used.user + used.system) / 1e6).toFixed(2)} s CPU for ${sources.length} files (loading the transformer included)`);
}

const jestConfig = (await import(path.join(ROOT, 'jest.config.js'))).default;
const swcOptions = jestConfig.projects[0].transform['^.+\\.ts$'][1];
cpuOf('ts-jest', () => require('ts-jest').default.createTransformer({ useESM: true, tsconfig: path.join(ROOT, 'tsconfig.json') }));
cpuOf('swc', () => require('@swc/jest').createTransformer(swcOptions));
