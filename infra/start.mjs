// `npm start`: the whole stack on one machine, for a first look. See README.md.
// Plain JavaScript with no dependencies, because it runs before `npm ci` may have happened.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureServices } from './ensure-services.mjs';
import { retirePreviousDemo, startDemoCampaigns } from './demo.mjs';
import { watchRuns } from './progress.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// METRONOME_DATA_DIR moves the demo's state and logs (the tests start `npm start` twice in one).
const DATA = path.resolve(process.env.METRONOME_DATA_DIR ?? path.join(ROOT, '.data'));
const ADMIN_TOKEN_FILE = path.join(DATA, 'admin-token');
const LOGS = path.join(DATA, 'logs');
const say = (line) => console.log(line);
const fail = (line) => {
  console.error(`✗ ${line}`);
  process.exit(1);
};

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19))
  fail(`Node ${process.versions.node} is too old: install Node 20.19 or newer (https://nodejs.org, or \`nvm install 20\`).`);

// 1. dependencies and build
const lock = path.join(ROOT, 'package-lock.json');
const installed = path.join(ROOT, 'node_modules', '.package-lock.json');
if (!existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs) {
  say('… installing dependencies (npm ci)');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) fail('npm ci failed: check your network access to the npm registry, then run `npm start` again.');
}
// the services run from swc's output (about a second); types are `npm run check`'s, not a start's
say('… building');
{
  const r = spawnSync(process.execPath, ['infra/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) fail('the build failed: see the errors above.');
}
// The console is bundled only when its sources are newer than the bundle: rebuilding it replaces
// console/dist, which an API already serving it (a test, another start) must not see vanish.
if (newestMtime(path.join(ROOT, 'console', 'src')) > mtimeOf(path.join(ROOT, 'console', 'dist', 'app.js'))) {
  say('… building the console');
  const r = spawnSync('npm', ['run', 'build', '--workspace', 'console', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) fail('the console build failed: see the errors above.');
}

// 2. configuration: development defaults, overridable from the environment
mkdirSync(LOGS, { recursive: true });
/** One admin token per data directory, kept in a file only its owner reads, so it survives restarts. */
function adminToken() {
  if (existsSync(ADMIN_TOKEN_FILE)) {
    const kept = readFileSync(ADMIN_TOKEN_FILE, 'utf8').trim();
    if (kept) return kept;
  }
  const token = `adm_${randomBytes(18).toString('base64url')}`;
  writeFileSync(ADMIN_TOKEN_FILE, `${token}\n`, { mode: 0o600 });
  return token;
}
const env = {
  ...process.env,
  NODE_ENV: process.env.NODE_ENV ?? 'development',
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome',
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  KEY_PREFIX: process.env.KEY_PREFIX ?? 'mtr',
  ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? adminToken(),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
};

// 3. Redis and PostgreSQL
let stopServices = () => undefined;
try {
  stopServices = await ensureServices({ databaseUrl: env.DATABASE_URL, redisUrl: env.REDIS_URL, mode: 'local', log: say });
} catch (error) {
  fail(error.message);
}

// 4. migrations
say('… migrating');
{
  const r = spawnSync(process.execPath, ['libs/db/dist/migrate-cli.js'], { cwd: ROOT, env, stdio: 'inherit' });
  if (r.status !== 0) cleanExit(1);
}

// 5. services, each as its own process with its log in .data/logs/
const apiPort = await freePort(Number(process.env.PORT ?? 8080));
const sandboxPort = await freePort(Number(process.env.SANDBOX_PORT ?? 8090));
const apiUrl = `http://127.0.0.1:${apiPort}`;
const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
const children = [];
function startService(name, script, extra) {
  const log = createWriteStream(path.join(LOGS, `${name}.log`), { flags: 'a' });
  const child = spawn(process.execPath, [script], { cwd: ROOT, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`✗ ${name} exited (${signal ?? code}); its log: ${path.join(LOGS, `${name}.log`)}`);
      shutdown(1);
    }
  });
  children.push({ name, child });
}
startService('sandbox', 'services/sandbox/dist/main.js', { SANDBOX_PORT: String(sandboxPort) });
startService('api', 'services/control-api/dist/server.js', { PORT: String(apiPort), HOST: '127.0.0.1' });
say(`… starting the sandbox and the control API (logs in ${path.relative(process.cwd(), LOGS) || LOGS}/)`);

let stopping = false;
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));
// `npm start` execs this script, so npm forwards SIGINT/SIGTERM here; if npm itself is killed
// outright, this process is re-parented: stop the stack rather than leave it running unowned.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) shutdown(0);
}, 1000).unref();

if (!(await until(async () => (await fetch(`${apiUrl}/readyz`).catch(() => null))?.ok, 30_000))) {
  console.error(`✗ the API did not become ready; its log: ${path.join(LOGS, 'api.log')}`);
  shutdown(1);
}
if (!(await until(async () => (await fetch(`${sandboxUrl}/healthz`).catch(() => null))?.ok, 15_000))) {
  console.error(`✗ the sandbox did not start; its log: ${path.join(LOGS, 'sandbox.log')}`);
  shutdown(1);
}

// 6. the demo, in two steps around the scheduler's start: the previous demo's campaigns are
// retired before any scheduler runs, so none of them fires late; the new ones start after.
let demoState;
try {
  demoState = await retirePreviousDemo({ apiUrl, adminToken: env.ADMIN_TOKEN, dataDir: DATA, say });
} catch (error) {
  console.error(`✗ preparing the demo failed: ${error.message}`);
  shutdown(1);
}
if (stopping) await new Promise(() => undefined);
const schedulerMetrics = await freePort(9464);
const senderMetrics = [await freePort(9465), await freePort(9466)];
startService('scheduler', 'services/scheduler/dist/main.js', { METRICS_PORT: String(schedulerMetrics) });
startService('sender-1', 'services/sender/dist/main.js', { METRICS_PORT: String(senderMetrics[0]), HTTP_TRANSPORT_URL: sandboxUrl, SENDER_CONCURRENCY: '8' });
startService('sender-2', 'services/sender/dist/main.js', { METRICS_PORT: String(senderMetrics[1]), HTTP_TRANSPORT_URL: sandboxUrl, SENDER_CONCURRENCY: '8' });
say('… starting the scheduler and two senders');
// The new campaigns are due the moment they exist: create them once every loop answers, so the
// demo's start lag is the scheduler's, not its start-up time.
for (const [name, port] of [
  ['scheduler', schedulerMetrics],
  ['sender-1', senderMetrics[0]],
  ['sender-2', senderMetrics[1]],
]) {
  if (!(await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, 30_000))) {
    console.error(`✗ the ${name} did not become ready; its log: ${path.join(LOGS, `${name}.log`)}`);
    shutdown(1);
  }
}
let demo;
try {
  demo = await startDemoCampaigns({ apiUrl, dataDir: DATA, state: demoState, say });
} catch (error) {
  console.error(`✗ creating the demo campaigns failed: ${error.message}`);
  shutdown(1);
}
if (stopping) await new Promise(() => undefined);

say('');
// The console link carries the demo tenant's token in the URL fragment (#token=…): browsers never
// send a fragment to the server, so the token reaches no request line and no log; the console
// reads it once into session storage and removes it from the address bar (history.replaceState).
say(`  Console       ${apiUrl}/#token=${encodeURIComponent(demo.token)}   (open it: the demo's Activity page)`);
say(`  Control API   ${apiUrl}        (reference: ${apiUrl}/docs, OpenAPI: ${apiUrl}/openapi.json)`);
say(`  Sandbox       ${sandboxUrl}        (what each chat received)`);
say(
  `  Metrics       ${apiUrl}/metrics  http://127.0.0.1:${schedulerMetrics}/metrics (scheduler)  http://127.0.0.1:${senderMetrics[0]}/metrics  http://127.0.0.1:${senderMetrics[1]}/metrics (senders)`,
);
say(`  Admin token   ${env.ADMIN_TOKEN}   (kept in ${path.relative(process.cwd(), ADMIN_TOKEN_FILE) || ADMIN_TOKEN_FILE} unless ADMIN_TOKEN is set)`);
say(`  Demo tenant   token ${demo.token}`);
say(`  Try           curl -H "Authorization: Bearer ${env.ADMIN_TOKEN}" ${apiUrl}/v1/runs`);
say('');
say(`Live progress (Ctrl-C, or SIGINT/SIGTERM to pid ${process.pid}, stops everything):`);
watchRuns({ apiUrl, token: demo.token, campaigns: demo.campaigns, say });

function shutdown(code) {
  if (stopping) return;
  stopping = true;
  say('\n… stopping (draining in-flight sends)');
  const waits = children.map(({ child }) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve))));
  for (const { child } of children) child.kill('SIGTERM');
  const force = setTimeout(() => children.forEach(({ child }) => child.kill('SIGKILL')), 20_000);
  Promise.all(waits).then(() => {
    clearTimeout(force);
    cleanExit(code);
  });
}

function cleanExit(code) {
  stopServices();
  say(code === 0 ? '✓ stopped' : '✗ stopped after an error');
  process.exit(code);
}

async function until(check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/** `preferred` when nothing listens there, else a free port the system picks. */
function freePort(preferred) {
  const attempt = (port) =>
    new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(null));
      server.listen(port, '127.0.0.1', () => {
        const chosen = server.address().port;
        server.close(() => resolve(chosen));
      });
    });
  return attempt(preferred).then((p) => p ?? attempt(0));
}

function mtimeOf(file) {
  return existsSync(file) ? statSync(file).mtimeMs : 0;
}

function newestMtime(dir) {
  return readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const full = path.join(dir, entry.name);
    return Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }, 0);
}
