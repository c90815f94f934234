// What a service's start costs: CPU (user + system, /proc/<pid>/stat) and wall time from spawn
// to its ready line, three rounds, the services alternated. Give it a migrated database (a
// clone of the tests' template will do) and any number of label, entry, ready-message triples:
//   node bench/service-start.mjs postgres://postgres@127.0.0.1:5432/<db> \
//     api services/control-api/dist/server.js "control-api listening" \
//     sender services/sender/dist/main.js "sender ready" \
//     scheduler services/scheduler/dist/main.js "scheduler ready" sandbox services/sandbox/dist/main.js "sandbox listening"
import { spawn } from 'node:child_process';
import { cpuSeconds as cpu, probeServiceEnv } from './probe-process.mjs';
const [, , dbUrl, ...pairs] = process.argv;
const env = probeServiceEnv(dbUrl, `probe-${process.pid}`);
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
