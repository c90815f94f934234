import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// A run has one writer: run-repository.ts holds every statement (or CTE) that inserts, updates
// or deletes `runs`; the other repositories call it. Sources of libs and services, tests aside.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const WRITER = 'libs/db/src/repositories/run-repository.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : sources(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** The source without its comments (`//` from a line's start, and `/* … *\/` blocks), lines kept. */
function code(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/^\s*\/\/.*$/gm, '');
}

/** Each place the source writes `runs`: in SQL (INSERT INTO, UPDATE, DELETE FROM, MERGE INTO) or with Kysely's builders. */
export function runWrites(source: string): string[] {
  const sqlWrite = /\b(?:insert\s+into|update|delete\s+from|merge\s+into)\s+(?:only\s+)?(?:"?public"?\.)?"?runs"?(?![\w.])/gi;
  const builderWrite = /\b(?:insertInto|updateTable|deleteFrom|mergeInto|replaceInto)\(\s*['"`]runs(?:\s+as\s+\w+)?['"`]/g;
  const text = code(source);
  return [...text.matchAll(sqlWrite), ...text.matchAll(builderWrite)].map((m) => `line ${text.slice(0, m.index).split('\n').length}: ${m[0]}`);
}

test('no file but run-repository.ts writes runs', () => {
  const files = [...sources(path.join(ROOT, 'libs')), ...sources(path.join(ROOT, 'services'))];
  const writers = files.flatMap((f) => runWrites(readFileSync(f, 'utf8')).map((w) => `${path.relative(ROOT, f)} ${w}`));
  expect(writers.filter((w) => !w.startsWith(`${WRITER} `))).toEqual([]);
  expect(writers.length).toBeGreaterThan(0);
});

test('finds a write of runs in SQL or with the query builder, not in a comment or another table', () => {
  const src = (text: string) => text.replaceAll('#{', '$' + '{');
  expect(runWrites(src('sql`update runs r set first_send_at = #{now} where r.id = #{id}`'))).toHaveLength(1);
  expect(runWrites(src('sql`with c as (INSERT INTO runs (id) values (#{id}) returning id) select 1`'))).toHaveLength(1);
  expect(runWrites(src('sql`delete from public.runs where id = #{id}`'))).toHaveLength(1);
  expect(runWrites(".updateTable('runs').set({ total: 1 })")).toHaveLength(1);
  expect(runWrites("db.insertInto('runs').values(row)")).toHaveLength(1);
  expect(runWrites("db.deleteFrom('runs as r')")).toHaveLength(1);
  expect(runWrites('// update runs when the job ends\n/* insert into runs */ const x = 1;')).toEqual([]);
  expect(runWrites(src('sql`update run_targets t set status = #{s} from runs r where r.id = t.run_id`'))).toEqual([]);
  expect(runWrites(".updateTable('run_targets')")).toEqual([]);
});
