import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Kysely } from 'kysely';
import { createDb, type DB } from '../../libs/db/src/index.js';
import { adminUrl, REDIS_URL, TEMPLATE_DB } from './urls.js';

export interface TestDatabase {
  url: string;
  name: string;
  db: Kysely<DB>;
  drop(): Promise<void>;
}

/** A fresh, migrated database for one test file, cloned from the template global-setup made. */
export async function createTestDatabase(label = 'it'): Promise<TestDatabase> {
  const name = `metronome_test_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`create database "${name}" template "${TEMPLATE_DB}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  const db = createDb({ url: url.toString(), max: 5, applicationName: 'metronome-test' });
  return {
    url: url.toString(),
    name,
    db,
    drop: async () => {
      await db.destroy();
      const a = new pg.Client({ connectionString: adminUrl() });
      await a.connect();
      try {
        await a.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** A KEY_PREFIX no other test uses, so tests share one Redis without seeing each other. */
export function uniquePrefix(label = 't'): string {
  return `test-${label}-${randomBytes(4).toString('hex')}`;
}

export { REDIS_URL };

// One polling helper for every test and benchmark: it lives in libs/testkit.
export { eventually, GiveUp } from '@metronome/testkit';
