import { readFileSync } from 'node:fs';
import pg from 'pg';

// CPU seconds per part of a running stack, from /proc (Linux): each service process, and the
// PostgreSQL backends connected to the stack's database (found in pg_stat_activity). Two
// snapshots' difference tells where a phase's CPU went; a backend that ended between them
// loses its share (the services keep their pools open, so few do).
const TICK = 100; // USER_HZ, as on every Linux the benchmarks run on

function cpuOf(pid) {
  try {
    // the fields after the command (in parentheses, which may hold spaces): utime, stime at 14, 15
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return null;
  }
}

export async function cpuSnapshot(stack, databaseUrl, databaseName) {
  const parts = {};
  for (const s of stack.services) {
    const key = s.name.startsWith('sender-') ? 'senders' : s.name;
    parts[key] = (parts[key] ?? 0) + (cpuOf(s.child.pid) ?? 0);
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const own = (await client.query('select pg_backend_pid() as pid')).rows[0].pid;
    const rows = (await client.query('select pid from pg_stat_activity where datname = $1 and pid <> $2', [databaseName, own])).rows;
    const backends = {};
    for (const r of rows) {
      const c = cpuOf(r.pid);
      if (c !== null) backends[r.pid] = c;
    }
    return { parts, backends };
  } finally {
    await client.end();
  }
}

/** CPU seconds from `a` to `b` per part, `postgres` the stack's backends. */
export function cpuBetween(a, b) {
  const out = {};
  for (const [k, v] of Object.entries(b.parts)) out[k] = +(v - (a.parts[k] ?? 0)).toFixed(2);
  let pgSeconds = 0;
  for (const [pid, v] of Object.entries(b.backends)) pgSeconds += v - (a.backends[pid] ?? 0);
  out.postgres = +pgSeconds.toFixed(2);
  return out;
}
