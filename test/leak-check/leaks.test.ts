// The check of the leak check: this file leaves a Redis and a PostgreSQL connection open, so the
// leak environment must fail it. Skipped unless LEAK_CHECK_SELF_TEST=1, since it is meant to fail:
//   LEAK_CHECK_SELF_TEST=1 node --experimental-vm-modules node_modules/jest/bin/jest.js --forceExit test/leak-check
// must report this file failed, naming both connections (--forceExit: they keep jest alive).
import pg from 'pg';
import { createRedis } from '@metronome/redis';
import { DATABASE_URL, REDIS_URL } from '../helpers/urls.js';

const run = process.env['LEAK_CHECK_SELF_TEST'] === '1' ? test : test.skip;

run('leaves a Redis and a PostgreSQL connection open', async () => {
  const redis = createRedis(REDIS_URL, 'test-deliberate-leak');
  await redis.ping();
  // the maintenance database: a session on a test template would stop every clone of it
  const url = new URL(DATABASE_URL);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString(), application_name: 'test-deliberate-leak' });
  await client.connect();
  await client.query('select 1');
});
