import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

// House rule: comments say what and why in a line or three, so they stay at most 10 % of the
// non-blank lines of the libraries' and services' code (tests and fixtures aside). Measurements
// and their history live in docs/BENCHMARKS.md and bench/results/HISTORY.md, not in the code.
const LIMIT = 0.1;
const CODE = /^(libs|services)\/[^/]+\/src\/.*\.ts$/;
const ASIDE = /\.test\.ts$|\.fixture\.ts$|\.d\.ts$/;

/** Non-blank lines, and how many of them are comments (`//`, `/* … *\/`, a block's inner lines). */
function commentShare(source: string): { comments: number; lines: number } {
  let comments = 0;
  let lines = 0;
  let inBlock = false;
  for (const raw of source.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    lines++;
    if (inBlock) {
      comments++;
      if (line.includes('*/')) inBlock = false;
    } else if (line.startsWith('//')) {
      comments++;
    } else if (line.startsWith('/*')) {
      comments++;
      inBlock = !line.includes('*/');
    }
  }
  return { comments, lines };
}

const files = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' })
  .split('\0')
  .filter((path) => CODE.test(path) && !ASIDE.test(path));

test('the count reads comment lines as the rule means them', () => {
  const source = ['// one', 'const a = 1; // code first', '/**', ' * two', ' */', '', '/* three */', 'const b = `/* not a comment start`;'].join('\n');
  expect(commentShare(source)).toEqual({ comments: 5, lines: 7 });
});

test('comments are at most 10 % of each library’s and service’s code', () => {
  expect(files.length).toBeGreaterThan(250);
  const byDirectory = new Map<string, { comments: number; lines: number }>();
  for (const path of files) {
    const dir = path.split('/').slice(0, 2).join('/');
    const share = commentShare(readFileSync(path, 'utf8'));
    const sum = byDirectory.get(dir) ?? { comments: 0, lines: 0 };
    byDirectory.set(dir, { comments: sum.comments + share.comments, lines: sum.lines + share.lines });
  }
  expect(byDirectory.size).toBeGreaterThan(10);
  const over = [...byDirectory].filter(([, s]) => s.comments > LIMIT * s.lines).map(([dir, s]) => `${dir}: ${((100 * s.comments) / s.lines).toFixed(1)} %`);
  expect(over).toEqual([]);
});
