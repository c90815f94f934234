// Before the integration tests: a migrated template database that each test file clones
// (CREATE DATABASE … TEMPLATE is a file copy: much faster than migrating per file). Rebuilt
// every run, so a changed migration is always picked up. Plain ESM on the build output
// (`npm test` builds first), because jest loads global setup outside its module mapping.
import pg from 'pg';
import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@metronome/db';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome_test';
const TEMPLATE_DB = 'metronome_test_template';

export default async function globalSetup() {
  const admin = new URL(DATABASE_URL);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [TEMPLATE_DB]);
    await client.query(`drop database if exists "${TEMPLATE_DB}"`);
  } finally {
    await client.end();
  }
  const url = new URL(DATABASE_URL);
  url.pathname = `/${TEMPLATE_DB}`;
  await ensureDatabase(url.toString());
  await migrate(url.toString(), MIGRATIONS_DIR);
}
