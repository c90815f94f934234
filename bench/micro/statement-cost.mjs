// What one statement costs, client and server: N prepared statements through node-postgres,
// 10 connections at once, each its own transaction (as a sender's claims are), and the CPU
// this process and PostgreSQL's processes used per statement (user+system, from /proc).
//
//   node bench/micro/statement-cost.mjs [N=20000]
//
// Three kinds: a read (`select $1`), an update of one row, and an update of ten rows, on a
// scratch table in a database of their own (dropped at the end). The difference between the
// last two is what a row costs; the rest is the statement and its commit, which a statement
// shared by several jobs pays once (services/sender/src/claim-statements.ts).
// PostgreSQL's CPU is every `postgres` process on the machine: run it on a quiet one.
import pg from 'pg';
import { postgresCpu } from './postgres-cpu.mjs';

const N = Number(process.argv[2] ?? 20000);
const PARALLEL = 10;
const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `metronome_statement_cost_${process.pid}`;

const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(base);
url.pathname = `/${dbName}`;
const pool = new pg.Pool({ connectionString: url.toString(), max: PARALLEL });
try {
  await pool.query(`create table scratch (id int primary key, v int not null)`);
  await pool.query(`insert into scratch select g, 0 from generate_series(1, ${N * 10 + 20}) g`);
  const kinds = [
    ['a read', 'select $1::int as x'],
    ['an update of one row', 'update scratch set v = v + 1 where id = $1 * 10 + 1'],
    ['an update of ten rows', 'update scratch set v = v + 1 where id between $1 * 10 + 1 and $1 * 10 + 10'],
  ];
  for (const [name, text] of kinds) {
    // each connection its own rows, so no statement waits for another's lock
    const loop = async (from, count) => {
      const client = await pool.connect();
      try {
        for (let i = from; i < from + count; i++) await client.query({ name: `q-${name}`, text, values: [i] });
      } finally {
        client.release();
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, (_, k) => loop(k * 10, 10))); // prepared and warm
    const cpu0 = process.cpuUsage();
    const pg0 = postgresCpu();
    const t0 = Date.now();
    await Promise.all(Array.from({ length: PARALLEL }, (_, k) => loop(k * (N / PARALLEL), N / PARALLEL)));
    const cpu = process.cpuUsage(cpu0);
    const seconds = (Date.now() - t0) / 1000;
    const client = (cpu.user + cpu.system) / N;
    const server = ((postgresCpu() - pg0) * 1e6) / N;
    console.log(
      `${name.padEnd(22)} ${(N / seconds).toFixed(0).padStart(6)}/s  client ${client.toFixed(1)} µs  PostgreSQL ${server.toFixed(1)} µs per statement`,
    );
  }
} finally {
  await pool.end();
  await admin.query(`drop database ${dbName}`);
  await admin.end();
}
