// What a page of runs costs the control API: the API alone on a migrated database (a clone of
// the tests' template will do), 60 queued runs of 20 chats made through the API, then 300
// `GET /v1/runs?limit=50` one after another (each run on the page explained: `waiting`), and
// 300 `GET /v1/me` beside it; the API's CPU (/proc/<pid>/stat) per request. A second argument
// writes the API's CPU profile to that directory.
//   node bench/micro/runs-list.mjs postgres://postgres@127.0.0.1:5432/<db> [profile-dir]
import { spawn } from 'node:child_process';
import { cpuSeconds as cpu, PROBE_ADMIN_TOKEN as admin, probeServiceEnv } from '../probe-process.mjs';
const dbUrl = process.argv[2];
const prof = process.argv[3];
const env = { ...probeServiceEnv(dbUrl, `lp-${process.pid}`), LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' };
const args = prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];
const api = spawn(process.execPath, [...args, 'services/control-api/dist/server.js'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => {
  let buf = '';
  api.stdout.on('data', (d) => {
    buf += d;
    const m = /"msg":"control-api listening".*?"url":"([^"]+)"/.exec(buf) || /"url":"([^"]+)".*?"msg":"control-api listening"/.exec(buf);
    if (m) resolve(m[1]);
  });
});
api.stdout.resume();
const call = async (method, path, token, body) => {
  const r = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, body: await r.json().catch(() => null) };
};
const t = await call('POST', '/v1/tenants', admin, { name: 'lp' });
const token = t.body.token;
const acc = await call('POST', '/v1/accounts', token, {
  platform: 'http',
  credentials: { apiKey: 'sandbox-api-key-0001' },
  name: 'a',
  externalId: 'lp-a',
  maxSendPerMinute: 60,
});
const targets = Array.from({ length: 20 }, (_, i) => `chat-${i}`);
for (let c = 0; c < 60; c++) {
  const camp = await call('POST', '/v1/campaigns', token, {
    accountId: acc.body.id,
    name: `c${c}`,
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date(Date.now() + 3600e3).toISOString() },
    messages: [{ type: 'text', text: 'hi' }],
    targets,
    active: false,
  });
  const r = await call('POST', `/v1/campaigns/${camp.body.id}/runs`, token);
  if (r.status !== 201) {
    console.log(r);
    process.exit(1);
  }
}
for (let i = 0; i < 50; i++) await call('GET', '/v1/runs?limit=50', token);
const N = 300;
const c0 = cpu(api.pid);
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const r = await call('GET', '/v1/runs?limit=50', token);
  if (i === 0) console.log('items', r.body.items.length, JSON.stringify(r.body.items[0]).length, 'bytes/item');
}
console.log('list of 50: API CPU ms/request', (((cpu(api.pid) - c0) * 1000) / N).toFixed(2), 'wall ms/request', ((performance.now() - t0) / N).toFixed(2));
const c1 = cpu(api.pid);
for (let i = 0; i < N; i++) await call('GET', '/v1/me', token);
console.log('/v1/me: API CPU ms/request', (((cpu(api.pid) - c1) * 1000) / N).toFixed(2));
api.kill('SIGTERM');
await new Promise((r) => api.on('exit', r));
