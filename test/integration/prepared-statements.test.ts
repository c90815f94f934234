import { sql } from 'kysely';
import pg from 'pg';
import { createDb, prepareStatements, statementName } from '@metronome/db';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// Kysely sends each query unnamed, so PostgreSQL parses and plans it on every call; createDb's
// connections prepare each parameterised statement once instead (libs/db/src/prepared-statements.ts).

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('prepared');
});
afterAll(async () => {
  await tdb.drop();
});

test('a parameterised statement is prepared once on a connection and reused; one without parameters is not', async () => {
  const db = createDb({ url: tdb.url, max: 1 });
  try {
    const query = (n: number) => sql<{ n: number }>`select ${n}::int + 1 as n`.execute(db);
    for (let n = 0; n < 5; n++) expect((await query(n)).rows[0]!.n).toBe(n + 1);
    // a script of several statements, as migrations send, still runs (a named statement must be one)
    await sql`create temporary table scratch (x int); insert into scratch values (1)`.execute(db);
    const prepared = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db);
    const names = prepared.rows.map((r) => r.name);
    expect(names).toContain(statementName('select $1::int + 1 as n'));
    // the query listing them is itself parameterless: only the one statement above, once
    expect(prepared.rows.filter((r) => r.statement === 'select $1::int + 1 as n')).toHaveLength(1);
  } finally {
    await db.destroy();
  }
});

test('past its limit a connection sends new statements unprepared, and still answers them', async () => {
  const client = new pg.Client({ connectionString: tdb.url });
  await client.connect();
  try {
    prepareStatements(client, 2);
    for (let k = 0; k < 4; k++) expect((await client.query(`select $1::int * ${k + 2} as n`, [3])).rows[0].n).toBe(3 * (k + 2));
    const prepared = await client.query('select count(*)::int as n from pg_prepared_statements');
    expect(prepared.rows[0].n).toBe(2);
  } finally {
    await client.end();
  }
});

test('planEachCall: a prepared statement is planned for its values on every call, never given a generic plan', async () => {
  // Without it PostgreSQL switches to a generic plan after five calls and keeps it until the
  // tables are analysed again, whatever they have grown to since (connection.ts says why the
  // scheduler asks for this).
  const count = async (db: ReturnType<typeof createDb>) => {
    for (let n = 0; n < 8; n++) await sql`select count(*) from pg_class where relpages > ${n}`.execute(db);
    const plans = await sql<{ generic: number; custom: number }>`
      select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement like '%relpages > $1'`.execute(db);
    return plans.rows[0]!;
  };
  const eachCall = createDb({ url: tdb.url, max: 1, planEachCall: true });
  const reused = createDb({ url: tdb.url, max: 1 });
  try {
    expect(await count(eachCall)).toEqual({ generic: 0, custom: 8 });
    // the default keeps the generic plan once it is as cheap: the check above can tell them apart
    expect((await count(reused)).generic).toBeGreaterThan(0);
  } finally {
    await eachCall.destroy();
    await reused.destroy();
  }
});

test("a connection's plans are made again every REPLAN_EVERY_MS, so a table that grew is read by its index", async () => {
  // A generic plan is kept until the table is analysed again; made on one row, it scans the
  // table whole after 100,000 more for as long as no ANALYZE comes (autovacuum off or behind).
  const client = new pg.Client({ connectionString: tdb.url });
  await client.connect();
  let now = 0;
  try {
    prepareStatements(client, 10, { everyMs: 60_000, now: () => now });
    await client.query('create temporary table grown (id int primary key, v int)');
    await client.query('insert into grown values (1, 1); analyze grown');
    const text = 'select v from grown where id = $1';
    for (let i = 0; i < 6; i++) expect((await client.query(text, [1])).rows).toEqual([{ v: 1 }]);
    const plan = async () => (await client.query(`explain execute ${statementName(text)}(1)`)).rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(await plan()).toMatch(/Seq Scan on grown/);
    await client.query('insert into grown select g, g from generate_series(2, 100001) g');
    now += 59_999;
    await client.query(text, [1]);
    expect(await plan()).toMatch(/Seq Scan on grown/);
    now += 1;
    expect((await client.query(text, [50_000])).rows).toEqual([{ v: 50_000 }]);
    expect(await plan()).toMatch(/Index Scan using grown_pkey/);
  } finally {
    await client.end();
  }
});
