// `npm start`: the whole stack on one machine, for a first look. See README.md.
// Plain JavaScript with no dependencies, because it runs before `npm ci` may have happened.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureServices } from './ensure-services.mjs';
import { demoImage } from './demo-image.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DATA = path.join(ROOT, '.data');
const LOGS = path.join(DATA, 'logs');
const say = (line) => console.log(line);
const fail = (line) => {
  console.error(`✗ ${line}`);
  process.exit(1);
};

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) fail(`Node ${process.versions.node} is too old: install Node 20.19 or newer (https://nodejs.org, or \`nvm install 20\`).`);

// 1. dependencies and build
const lock = path.join(ROOT, 'package-lock.json');
const installed = path.join(ROOT, 'node_modules', '.package-lock.json');
if (!existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs) {
  say('… installing dependencies (npm ci)');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) fail('npm ci failed: check your network access to the npm registry, then run `npm start` again.');
}
say('… building (tsc -b)');
{
  const r = spawnSync('npx', ['tsc', '-b', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) fail('the build failed: see the errors above.');
}

// 2. configuration: development defaults, overridable from the environment
mkdirSync(LOGS, { recursive: true });
const env = {
  ...process.env,
  NODE_ENV: process.env.NODE_ENV ?? 'development',
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome',
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  KEY_PREFIX: process.env.KEY_PREFIX ?? 'mtr',
  ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? `adm_${randomBytes(18).toString('base64url')}`,
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
startService('scheduler', 'services/scheduler/dist/main.js', { METRICS_PORT: String(await freePort(9464)) });
startService('sender-1', 'services/sender/dist/main.js', { METRICS_PORT: String(await freePort(9465)), HTTP_TRANSPORT_URL: sandboxUrl, SENDER_CONCURRENCY: '8' });
startService('sender-2', 'services/sender/dist/main.js', { METRICS_PORT: String(await freePort(9466)), HTTP_TRANSPORT_URL: sandboxUrl, SENDER_CONCURRENCY: '8' });
say(`… starting sandbox, api, scheduler and two senders (logs in ${path.relative(process.cwd(), LOGS) || LOGS}/)`);

let stopping = false;
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));

if (!(await until(async () => (await fetch(`${apiUrl}/readyz`).catch(() => null))?.ok, 30_000))) {
  console.error(`✗ the API did not become ready; its log: ${path.join(LOGS, 'api.log')}`);
  shutdown(1);
}
if (!(await until(async () => (await fetch(`${sandboxUrl}/healthz`).catch(() => null))?.ok, 15_000))) {
  console.error(`✗ the sandbox did not start; its log: ${path.join(LOGS, 'sandbox.log')}`);
  shutdown(1);
}

// 6. the demo: a tenant, two accounts on the sandbox, a campaign to 50 chats (text + image)
const demo = await createDemo();
say('');
// The console link carries the demo tenant's token in the URL fragment (#token=…): browsers never
// send a fragment to the server, so the token reaches no request line and no log; the console
// reads it once into session storage and removes it from the address bar (history.replaceState).
say(`  Console       ${apiUrl}/#token=${encodeURIComponent(demo.token)}   (open it: the demo's Activity page)`);
say(`  Control API   ${apiUrl}        (OpenAPI: ${apiUrl}/openapi.json)`);
say(`  Sandbox       ${sandboxUrl}        (what each chat received)`);
say(`  Admin token   ${env.ADMIN_TOKEN}`);
say(`  Demo tenant   token ${demo.token}`);
say(`  Try           curl -H "Authorization: Bearer ${env.ADMIN_TOKEN}" ${apiUrl}/v1/runs`);
say('');
say('Live progress (Ctrl-C stops everything):');
watchRuns(demo.token);

async function createDemo() {
  const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const call = async (method, url, body, headers = admin) => {
    const res = await fetch(`${apiUrl}${url}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) });
    const json = await res.json().catch(() => null);
    if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  try {
    // Campaigns of an earlier `npm start` would keep running: stop them first.
    const previous = path.join(DATA, 'demo.json');
    if (existsSync(previous)) {
      const old = JSON.parse(readFileSync(previous, 'utf8'));
      for (const id of old.campaignIds ?? []) await call('DELETE', `/v1/campaigns/${id}`).catch(() => undefined);
    }
    const tenant = await call('POST', '/v1/tenants', { name: `Demo ${new Date().toISOString().slice(0, 16)}` });
    const auth = { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' };
    const suffix = randomBytes(3).toString('hex');
    // Each http account has its own API key; the sandbox registers it with the account's first request.
    const apiKey = () => ({ apiKey: randomBytes(24).toString('base64url') });
    const a = await call('POST', '/v1/accounts', { platform: 'http', name: 'Demo account A', externalId: `demo-a-${suffix}`, credentials: apiKey(), maxSendPerMinute: 120 }, auth);
    const b = await call('POST', '/v1/accounts', { platform: 'http', name: 'Demo account B', externalId: `demo-b-${suffix}`, credentials: apiKey(), maxSendPerMinute: 60 }, auth);
    const media = await call('POST', '/v1/media?filename=metronome.png', demoImage(), { authorization: auth.authorization, 'content-type': 'image/png' });
    const chats = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(2, '0')}`);
    const messages = [
      { type: 'text', text: 'Good morning! This is your Metronome demo reminder.' },
      { type: 'media', mediaId: media.id, caption: 'Sent by Metronome' },
    ];
    const c1 = await call('POST', '/v1/campaigns', { accountId: a.id, name: 'Demo: every minute to 50 chats', timezone: 'UTC', schedule: { type: 'interval', everySeconds: 60 }, messages, targets: chats('group', 50) }, auth);
    const c2 = await call('POST', '/v1/campaigns', { accountId: b.id, name: 'Demo: every 2 minutes to 10 chats', timezone: 'UTC', schedule: { type: 'interval', everySeconds: 120 }, messages: messages.slice(0, 1), targets: chats('team', 10) }, auth);
    writeFileSync(previous, JSON.stringify({ tenantId: tenant.id, campaignIds: [c1.id, c2.id] }));
    say(`✓ demo tenant "${tenant.name}", accounts A (120/min) and B (60/min), campaigns to 50 and 10 sandbox chats`);
    return { token: tenant.token, names: new Map([[c1.id, c1.name], [c2.id, c2.name]]) };
  } catch (error) {
    console.error(`✗ creating the demo failed: ${error.message}`);
    shutdown(1);
    return new Promise(() => undefined);
  }
}

function watchRuns(token) {
  const seen = new Map();
  const tick = async () => {
    if (stopping) return;
    try {
      const res = await fetch(`${apiUrl}/v1/runs?limit=10`, { headers: { authorization: `Bearer ${token}` } });
      if (res.ok) {
        const { items } = await res.json();
        for (const run of items.slice().reverse()) {
          const c = run.counts;
          const line = `${run.status.padEnd(9)} ${String(c.sent).padStart(3)}/${c.total} sent${c.failed ? `, ${c.failed} failed` : ''}${c.pending ? `, ${c.pending} pending` : ''}`;
          // a line when a run changes status, and at most every 5 s while it progresses
          const last = seen.get(run.id);
          if (last && (last.line === line || (last.status === run.status && Date.now() - last.at < 5000))) continue;
          seen.set(run.id, { line, status: run.status, at: Date.now() });
          const lag = run.startedAt ? ` start lag ${((Date.parse(run.startedAt) - Date.parse(run.scheduledAt)) / 1000).toFixed(2)} s` : '';
          say(`${new Date().toISOString().slice(11, 19)}  run ${run.id.slice(0, 8)}  ${(demo.names.get(run.campaignId) ?? run.campaignId).padEnd(36)} ${line}${lag}${run.errorSummary ? `  — ${run.errorSummary}` : ''}`);
        }
      }
    } catch {
      // the API is restarting or stopping; the next poll tells
    }
    setTimeout(tick, 1000);
  };
  tick();
}

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
