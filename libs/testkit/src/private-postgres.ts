import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MIGRATIONS_DIR, migrate } from '@metronome/db';
import { freePort } from './processes.js';

const run = promisify(execFile);

/** A PostgreSQL server of a test's own (initdb + pg_ctl, free port, temporary data): stop and start it as an outage. */
export interface PrivatePostgres {
  port: number;
  /** DATABASE_URL of the migrated database */
  url: string;
  /** `pg_ctl stop -m fast`: connections are cut, open transactions rolled back */
  stop(): Promise<void>;
  /** starts it again on the same port and data; resolves once it accepts connections */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** initdb/pg_ctl of Debian's versioned directory (they are not on PATH there), or from PATH. */
function postgresBin(name: string): string {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    for (const version of readdirSync(base).sort().reverse()) {
      const candidate = path.join(base, version, 'bin', name);
      if (existsSync(candidate)) return candidate;
    }
  }
  return name;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'metronome-pg-'));
  const data = path.join(dir, 'data');
  // initdb and postgres refuse to run as root: run them as the postgres user Debian's package creates.
  const asRoot = process.getuid?.() === 0;
  const exec = (bin: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', postgresBin(bin), ...args]) : run(postgresBin(bin), args));
  if (asRoot) {
    const ids = (await run('id', ['-u', 'postgres'])).stdout.trim();
    const gid = (await run('id', ['-g', 'postgres'])).stdout.trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  await exec('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const start = async () => {
    await exec('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
  };
  const stop = async () => {
    await exec('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
  };
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/metronome`;
  await migrate(url, MIGRATIONS_DIR);
  return {
    port,
    url,
    stop,
    start,
    destroy: async () => {
      await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
