import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate, MIGRATIONS_DIR } from '@metronome/db';

/** A database made for one test file or one benchmark, dropped afterwards. */
export interface ScratchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function withPath(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withPath(databaseUrl, 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh database on the server of `databaseUrl`: a copy of `template` when given (fast), else migrated. */
export async function createScratchDatabase(databaseUrl: string, label: string, template?: string): Promise<ScratchDatabase> {
  const name = `metronome_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  await admin(databaseUrl, (c) => c.query(`create database "${name}"${template ? ` template "${template}"` : ''}`));
  const url = withPath(databaseUrl, name);
  if (!template) await migrate(url, MIGRATIONS_DIR);
  return { url, name, drop: () => admin(databaseUrl, (c) => c.query(`drop database if exists "${name}" with (force)`)).then(() => undefined) };
}
