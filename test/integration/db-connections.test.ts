import { jest } from '@jest/globals';
import { sql } from 'kysely';
import { createDb } from '@metronome/db';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// createDb's pools keep a connection once opened (libs/db/src/connection.ts says why): a service
// idle between two bursts must meet the next one with its backends, caches and prepared
// statements, not reconnect on the path of the runs that are due.

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('connections');
});
afterAll(async () => {
  await tdb.drop();
});

test('a connection idle for longer than pg’s default idle timeout (10 s) is kept, with its prepared statements', async () => {
  const db = createDb({ url: tdb.url, max: 1 });
  try {
    const backend = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid where ${1}::int = 1`.execute(db)).rows[0]!.pid;
    // 11 s idle on a manual clock: pg's pool closes an idle client by a timer (setTimeout) it
    // sets when the client is released, so with the timers faked from before the first query,
    // advancing them past 10 s fires it, if there is one, without waiting; sockets and
    // promises go on for real.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'hrtime', 'performance'] });
    let before: number;
    try {
      before = await backend();
      await jest.advanceTimersByTimeAsync(11_000);
    } finally {
      jest.useRealTimers();
    }
    expect(await backend()).toBe(before);
    const prepared = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where statement like '%pg_backend_pid()%'`.execute(db);
    expect(prepared.rows[0]!.n).toBe(1);
  } finally {
    await db.destroy();
  }
});
