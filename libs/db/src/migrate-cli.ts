import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, redactUrl } from './migrate.js';

// `npm run migrate`: applies migrations/ to DATABASE_URL.
const databaseUrl = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/metronome';
const dir = process.env['MIGRATIONS_DIR'] ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../migrations');

try {
  const result = await migrate(databaseUrl, dir);
  const applied = result.applied.length ? result.applied.join(', ') : 'nothing new';
  console.log(`migrate: ${redactUrl(databaseUrl)} — applied ${applied} (${result.alreadyApplied} already applied)`);
} catch (error) {
  console.error(`migrate: ${redactUrl(databaseUrl)} — ${(error as Error).message}`);
  console.error('Is PostgreSQL running? `npm start` starts a local one, or set DATABASE_URL.');
  process.exit(1);
}
