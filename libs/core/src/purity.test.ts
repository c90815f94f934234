import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// libs/core is the pure domain: data and `now` in, decisions out. It must not reach for I/O.
const FORBIDDEN = ['ioredis', 'bullmq', 'kysely', 'pg', 'fastify', 'pino', 'prom-client', 'node:http', 'node:net', 'node:fs'];

test('libs/core imports no I/O library', () => {
  const dir = path.dirname(fileURLToPath(import.meta.url));
  const offenders: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    const source = readFileSync(path.join(dir, file), 'utf8');
    for (const match of source.matchAll(/from\s+'([^']+)'/g)) {
      if (FORBIDDEN.includes(match[1]!)) offenders.push(`${file} imports ${match[1]}`);
    }
  }
  expect(offenders).toEqual([]);
});
