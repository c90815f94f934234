import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

const MIGRATION_LOCK = 7_346_001_002n;

/** Creates the database if missing and applies each `NNNN_name.sql` not yet applied, one transaction each, under an advisory lock. */
export async function migrate(databaseUrl: string, dir: string): Promise<MigrateResult> {
  await ensureDatabase(databaseUrl);
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'metronome-migrate' });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    await client.query('create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())');
    const done = new Set((await client.query<{ name: string }>('select name from schema_migrations')).rows.map((r) => r.name));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(path.join(dir, file), 'utf8');
      await client.query('begin');
      try {
        await client.query(sql);
        await client.query('insert into schema_migrations (name) values ($1)', [file]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw new Error(`migration ${file} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(file);
    }
    return { applied, alreadyApplied: done.size };
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]).catch(() => undefined);
    await client.end();
  }
}

/** Creates the database in `databaseUrl` if missing (racing creators are fine). */
export async function ensureDatabase(databaseUrl: string, template?: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name) throw new Error(`DATABASE_URL has no database name: ${redactUrl(databaseUrl)}`);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString(), application_name: 'metronome-migrate' });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount) return false;
    const ident = `"${name.replaceAll('"', '""')}"`;
    const from = template ? ` template "${template.replaceAll('"', '""')}"` : '';
    try {
      await admin.query(`create database ${ident}${from}`);
      return true;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === '42P04' || code === '23505') return false;
      throw error;
    }
  } finally {
    await admin.end();
  }
}

export function redactUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '<unparseable url>';
  }
}
