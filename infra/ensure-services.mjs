// Makes sure Redis and PostgreSQL answer at REDIS_URL / DATABASE_URL, starting local ones when
// they do not. No dependencies: it runs before `npm ci` has necessarily happened.
//   node infra/ensure-services.mjs            check; start the machine's own services if installed
//   import { ensureServices } from './ensure-services.mjs'   (npm start: local ones under .data/)
import { spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, chownSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Resolves true when something speaking the Redis protocol answers PING at host:port. */
export function redisAnswers(host, port, timeoutMs = 1500) {
  return probe(host, port, Buffer.from('PING\r\n'), (data) => data.toString().startsWith('+PONG') || data.toString().startsWith('-NOAUTH'), timeoutMs);
}

/** Resolves true when a PostgreSQL server answers an SSLRequest ('S' or 'N') at host:port. */
export function postgresAnswers(host, port, timeoutMs = 1500) {
  const packet = Buffer.alloc(8);
  packet.writeInt32BE(8, 0);
  packet.writeInt32BE(80877103, 4);
  return probe(host, port, packet, (data) => data[0] === 0x53 || data[0] === 0x4e, timeoutMs);
}

function probe(host, port, payload, ok, timeoutMs) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (value) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(payload));
    socket.once('data', (data) => done(ok(data)));
  });
}

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** initdb/pg_ctl: on PATH, or in Debian's versioned directory. */
function postgresBin(name) {
  const onPath = which(name);
  if (onPath) return onPath;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  for (const version of readdirSync(base).sort().reverse()) {
    const candidate = path.join(base, version, 'bin', name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

async function waitFor(check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

const isLocal = (host) => ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);

/**
 * Ensures both services answer. `mode: 'local'` starts missing ones as children of this
 * machine's binaries with their data under .data/ (npm start); `mode: 'system'` uses the
 * machine's own service commands (CI). Returns a stop function for what it started, or
 * throws an Error whose message says in one sentence what to install or run.
 */
export async function ensureServices({ databaseUrl, redisUrl, mode = 'local', log = console.log }) {
  const stops = [];
  const redis = new URL(redisUrl);
  const redisHost = redis.hostname || '127.0.0.1';
  const redisPort = Number(redis.port || 6379);
  if (await redisAnswers(redisHost, redisPort)) log(`✓ Redis answers at ${redisHost}:${redisPort}`);
  else {
    if (!isLocal(redisHost)) throw new Error(`Redis does not answer at ${redisHost}:${redisPort}: start it, or set REDIS_URL to one that runs.`);
    const bin = which('redis-server');
    if (!bin)
      throw new Error(
        'Redis is not running and redis-server is not installed: run `sudo apt-get install redis-server` (or `brew install redis`), or set REDIS_URL.',
      );
    const dir = path.join(ROOT, '.data', 'redis');
    mkdirSync(dir, { recursive: true });
    log(`… starting Redis on port ${redisPort} (${mode === 'local' ? dir : 'system'})`);
    execFileSync(bin, [
      '--daemonize',
      'yes',
      '--bind',
      '127.0.0.1',
      '--port',
      String(redisPort),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--logfile',
      path.join(dir, 'redis.log'),
      '--pidfile',
      path.join(dir, 'redis.pid'),
    ]);
    if (!(await waitFor(() => redisAnswers(redisHost, redisPort), 10_000))) throw new Error(`Redis did not start: see ${path.join(dir, 'redis.log')}.`);
    log(`✓ Redis started on port ${redisPort}`);
    if (mode === 'local') stops.push(() => spawnSync(which('redis-cli') ?? 'redis-cli', ['-p', String(redisPort), 'shutdown', 'nosave']));
  }

  const pg = new URL(databaseUrl);
  const pgHost = pg.hostname || '127.0.0.1';
  const pgPort = Number(pg.port || 5432);
  if (await postgresAnswers(pgHost, pgPort)) log(`✓ PostgreSQL answers at ${pgHost}:${pgPort}`);
  else {
    if (!isLocal(pgHost)) throw new Error(`PostgreSQL does not answer at ${pgHost}:${pgPort}: start it, or set DATABASE_URL to one that runs.`);
    const cluster = which('pg_ctlcluster');
    if (mode === 'system' && cluster) {
      const version = readdirSync('/etc/postgresql').sort().reverse()[0];
      log(`… starting the machine's PostgreSQL ${version}`);
      execFileSync(cluster, ['--skip-systemctl-redirect', version, 'main', 'start'], { stdio: 'inherit' });
    } else {
      const initdb = postgresBin('initdb');
      const pgCtl = postgresBin('pg_ctl');
      if (!initdb || !pgCtl)
        throw new Error(
          'PostgreSQL is not running and initdb/pg_ctl are not installed: run `sudo apt-get install postgresql` (or `brew install postgresql@15`), or set DATABASE_URL.',
        );
      const dir = path.join(ROOT, '.data', 'postgres');
      // initdb refuses to run as root: run it as the postgres user, which Debian's package creates.
      const asUser = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
      const run = (bin, args) => {
        const [cmd, ...rest] = [...asUser, bin, ...args];
        const r = spawnSync(cmd, rest, { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`${path.basename(bin)} failed: ${(r.stderr || r.stdout).trim().split('\n').pop()}`);
      };
      if (!existsSync(path.join(dir, 'PG_VERSION'))) {
        log(`… creating a PostgreSQL cluster in ${dir}`);
        mkdirSync(dir, { recursive: true });
        if (asUser.length) chownSync(dir, uidOf('postgres'), gidOf('postgres'));
        run(initdb, ['-D', dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
      }
      log(`… starting PostgreSQL on port ${pgPort}`);
      run(pgCtl, ['-D', dir, '-l', path.join(dir, 'server.log'), '-w', '-o', `-p ${pgPort} -c listen_addresses=127.0.0.1 -k /tmp`, 'start']);
      if (mode === 'local')
        stops.push(() => spawnSync(asUser[0] ?? pgCtl, [...asUser.slice(1), ...(asUser.length ? [pgCtl] : []), '-D', dir, '-m', 'fast', 'stop']));
    }
    if (!(await waitFor(() => postgresAnswers(pgHost, pgPort), 20_000))) throw new Error('PostgreSQL did not start: see .data/postgres/server.log.');
    log(`✓ PostgreSQL started on port ${pgPort}`);
  }
  return () => {
    for (const stop of stops.reverse()) stop();
  };
}

function uidOf(user) {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}
function gidOf(user) {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    await ensureServices({
      databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome',
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      mode: process.argv.includes('--local') ? 'local' : 'system',
    });
  } catch (error) {
    console.error(`✗ ${error.message}`);
    process.exit(1);
  }
}
