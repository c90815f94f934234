/** Where the tests find PostgreSQL and Redis: the same variables the services read. */
export const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/metronome_test';
export const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** Set by global-setup.mjs: the migrated template for this version of migrations/. */
export const TEMPLATE_DB = process.env['METRONOME_TEST_TEMPLATE'] ?? 'metronome_test_template';
