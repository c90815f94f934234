// The README stays true: every environment variable a service parses is in its configuration
// table (and in docs/CONTRACT.md), and every relative link in the README and docs/ names a file
// that exists, with a heading for its #anchor.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Variable names as the config schemas declare them: `  NAME: z…` keys of the zod objects. */
function parsedVariables(): string[] {
  const files = [
    ...readdirSync(path.join(ROOT, 'services')).map((s) => `services/${s}/src/config.ts`),
    ...readdirSync(path.join(ROOT, 'libs/config/src'))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => `libs/config/src/${f}`),
  ].filter((f) => existsSync(path.join(ROOT, f)));
  const names = new Set<string>();
  for (const file of files) for (const m of read(file).matchAll(/^\s+([A-Z][A-Z0-9_]{2,}): /gm)) names.add(m[1]!);
  return [...names].sort();
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

test('every variable a service parses is in the README table and the contract', () => {
  const variables = parsedVariables();
  expect(variables.length).toBeGreaterThan(30);
  const readme = read('README.md');
  const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5));
  const contract = read('docs/CONTRACT.md');
  expect(variables.filter((v) => !table.includes(`\`${v}\``))).toEqual([]);
  expect(variables.filter((v) => !contract.includes(v))).toEqual([]);
});

test('every metric the services register is in the contract', () => {
  const names = [...read('libs/observability/src/metrics.ts').matchAll(/name: '(metronome_[a-z_]+)'/g)].map((m) => m[1]!);
  expect(names.length).toBeGreaterThan(15);
  const contract = read('docs/CONTRACT.md');
  const metrics = contract.slice(contract.indexOf('## 6. Metrics'));
  expect(names.filter((n) => !metrics.includes(`\`${n}\``))).toEqual([]);
});

test('every relative link in README.md and docs/*.md and the comment in jest.config.js leads somewhere', () => {
  const documents = [
    'README.md',
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const broken: string[] = [];
  for (const doc of documents) {
    for (const m of read(doc).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue; // http(s), mailto
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? doc : path.join(path.dirname(doc), file);
      if (!existsSync(path.join(ROOT, resolved))) {
        broken.push(`${doc}: ${target} (no such file)`);
        continue;
      }
      if (anchor && resolved.endsWith('.md')) {
        const headings = [...read(resolved).matchAll(/^#{1,6} (.+)$/gm)].map((h) => anchorOf(h[1]!));
        if (!headings.includes(anchor)) broken.push(`${doc}: ${target} (no such heading)`);
      }
    }
  }
  for (const m of read('jest.config.js').matchAll(/see (docs\/[\w-]+\.md)/g)) if (!existsSync(path.join(ROOT, m[1]!))) broken.push(`jest.config.js: ${m[1]}`);
  expect(broken).toEqual([]);
});
