import { ensureDatabase, migrate, MIGRATIONS_DIR } from '../libs/db/src/index.js';
import { adminUrl, TEMPLATE_DB } from './helpers/urls.js';
import pg from 'pg';

/**
 * Before the integration tests: a migrated template database that each test file clones
 * (CREATE DATABASE … TEMPLATE is a file copy: much faster than migrating per file).
 * Rebuilt every run, so a changed migration is always picked up.
 */
export default async function globalSetup(): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [TEMPLATE_DB]);
    await admin.query(`drop database if exists "${TEMPLATE_DB}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${TEMPLATE_DB}`;
  await ensureDatabase(url.toString());
  await migrate(url.toString(), MIGRATIONS_DIR);
}
