import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// A run's status changes in one place: run-status.ts. Every other statement that updates `runs`
// takes its status change from there (`${x.set}`); none writes `status` itself.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : sources(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Where a file writes runs.status by itself: raw `update runs … set … status =` or Kysely's `updateTable('runs').set({ status`. */
export function statusWrites(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/update\s+runs\b[^`]*?\bset\b([^`]*?)(?:\bwhere\b|\bfrom\b|`)/gis)) {
    if (/(^|[\s,])status\s*=/i.test(m[1]!)) found.push(m[0].slice(0, 80));
  }
  for (const m of source.matchAll(/updateTable\(\s*'runs'\s*\)\s*\.set\(\s*\{[^}]*\bstatus\b/g)) found.push(m[0].slice(0, 80));
  return found;
}

test('no statement outside run-status.ts writes a run status', () => {
  const files = [...sources(path.join(ROOT, 'libs')), ...sources(path.join(ROOT, 'services'))].filter((f) => !f.endsWith('run-status.ts'));
  const writes = files.flatMap((f) => statusWrites(readFileSync(f, 'utf8')).map((w) => `${path.relative(ROOT, f)}: ${w}`));
  expect(writes).toEqual([]);
});

test('finds a status written by hand, in SQL or with the query builder', () => {
  // `#{…}` stands for a template's placeholder
  const src = (text: string) => text.replaceAll('#{', '$' + '{');
  expect(statusWrites(src("sql`update runs r set status = 'paused', updated_at = #{now} where r.id = #{id}`"))).toHaveLength(1);
  expect(statusWrites(".updateTable('runs').set({ status: 'paused', updated_at: now })")).toHaveLength(1);
  expect(statusWrites(src('sql`update runs r set #{pause.set} where r.id = #{id} and #{pause.from}`'))).toEqual([]);
  expect(statusWrites(src('sql`update runs r set first_send_at = #{now} where r.id = #{id}`'))).toEqual([]);
});
