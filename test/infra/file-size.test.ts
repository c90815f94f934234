import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

// House rule: no source file over 400 lines (small modules with one job each). Generated files
// are exempt: the console's API types are written by openapi-typescript from /openapi.json.
const LIMIT = 400;
const GENERATED = new Set(['console/src/api-types.ts']);
const SOURCE = /\.(ts|tsx|mjs|js|sql|lua)$/;

const tracked = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' }).split('\0');
const sources = tracked.filter((path) => SOURCE.test(path) && !GENERATED.has(path));

test('the rule sees the project’s sources', () => {
  expect(sources.length).toBeGreaterThan(300);
  expect(sources).toContain('services/sender/src/run-job.ts');
});

test('no source file is over 400 lines', () => {
  const over = sources
    .map((path) => ({ path, lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
    .filter((file) => file.lines > LIMIT)
    .map((file) => `${file.path}: ${file.lines} lines`);
  expect(over).toEqual([]);
});
