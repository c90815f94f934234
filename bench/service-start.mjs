// What a service's start costs: CPU (user + system, /proc/<pid>/stat) and wall time from spawn
// to its ready line, three rounds, the services alternated. Give it a migrated database (a
// clone of the tests' template will do) and any number of label, entry, ready-message triples:
//   node bench/service-start.mjs postgres://postgres@127.0.0.1:5432/<db> \
//     api services/control-api/dist/server.js "control-api listening" \
//     sender services/sender/dist/main.js "sender ready" \
//     scheduler services/scheduler/dist/main.js "scheduler ready" sandbox services/sandbox/dist/main.js "sandbox listening"
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
const [, , dbUrl, ...pairs] = process.argv;
const cpu = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const env = {
  ...process.env,
  DATABASE_URL: dbUrl,
  REDIS_URL: 'redis://127.0.0.1:6379',
  KEY_PREFIX: 'probe-' + process.pid,
  PORT: '0',
  HOST: '127.0.0.1',
  ADMIN_TOKEN: 'adm_' + 'x'.repeat(24),
  METRICS_PORT: '0',
  SANDBOX_PORT: '0',
  HTTP_TRANSPORT_URL: 'http://127.0.0.1:9',
  NODE_ENV: 'development',
  MIN_INTERVAL_SECONDS: '1',
};
const results = {};
for (let round = 0; round < 3; round++)
  for (let i = 0; i < pairs.length; i += 3) {
    const [label, entry, ready] = pairs.slice(i, i + 3);
    const child = spawn(process.execPath, [entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const t0 = performance.now();
    const value = await new Promise((resolve, reject) => {
      let buf = '';
      const onData = (d) => {
        buf += d;
        for (const line of buf.split('\n'))
          if (line.includes(`"msg":"${ready}"`)) {
            resolve(cpu(child.pid));
            return;
          }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', (d) => {
        buf += d;
      });
      child.on('exit', (c) => reject(new Error(`${label} exited ${c}: ${buf.slice(-800)}`)));
    });
    const wall = performance.now() - t0;
    child.removeAllListeners('exit');
    child.kill('SIGKILL');
    (results[label] ??= []).push(`${value.toFixed(2)}s cpu/${(wall / 1000).toFixed(2)}s`);
  }
console.log(results);
