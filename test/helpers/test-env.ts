import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createScratchDatabase } from '@metronome/testkit';
import { createDb, type DB } from '../../libs/db/src/index.js';
import { DATABASE_URL, REDIS_URL, TEMPLATE_DB } from './urls.js';

export interface TestDatabase {
  url: string;
  name: string;
  db: Kysely<DB>;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database for one test file, cloned from the template global-setup made by
 * the one cloner in libs/testkit (benchmarks use it too), with a Kysely handle on it.
 */
export async function createTestDatabase(label = 'it'): Promise<TestDatabase> {
  const scratch = await createScratchDatabase(DATABASE_URL, `test_${label}`, TEMPLATE_DB);
  const db = createDb({ url: scratch.url, max: 5, applicationName: 'metronome-test' });
  return {
    url: scratch.url,
    name: scratch.name,
    db,
    drop: async () => {
      await db.destroy();
      await scratch.drop();
    },
  };
}

/**
 * A fresh database for each test of the file, dropped after it. The object returned is refilled
 * by every beforeEach, so a test reads it as that test's database.
 */
export function databasePerTest(label: string): TestDatabase {
  const current = {} as TestDatabase;
  beforeEach(async () => {
    Object.assign(current, await createTestDatabase(label));
  });
  afterEach(async () => {
    await current.drop?.();
  });
  return current;
}

/** A KEY_PREFIX no other test uses, so tests share one Redis without seeing each other. */
export function uniquePrefix(label = 't'): string {
  return `test-${label}-${randomBytes(4).toString('hex')}`;
}

export { REDIS_URL };

// One polling helper for every test and benchmark: it lives in libs/testkit.
export { eventually, GiveUp } from '@metronome/testkit';
