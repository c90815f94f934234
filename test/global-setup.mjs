// Before the integration tests: a migrated template database that each test file clones
// (CREATE DATABASE … TEMPLATE is a file copy: much faster than migrating per file). Its name
// carries a hash of migrations/, so a changed migration gets a new template, and test runs
// going on at the same time never drop one another's. Plain ESM on the build output
// (`npm test` builds first), because jest loads global setup outside its module mapping.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@metronome/db';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome_test';

export default async function globalSetup() {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) hash.update(file).update(readFileSync(path.join(MIGRATIONS_DIR, file)));
  const template = `metronome_test_tpl_${hash.digest('hex').slice(0, 12)}`;
  const url = new URL(DATABASE_URL);
  url.pathname = `/${template}`;
  await ensureDatabase(url.toString());
  await migrate(url.toString(), MIGRATIONS_DIR);
  // test workers start after this and inherit the variable
  process.env.METRONOME_TEST_TEMPLATE = template;
}
