// What the one-process probes (service-start, stack-idle, micro/runs-list) share: a process's
// CPU so far, and the environment a service runs in alone on a given database.
import { readFileSync } from 'node:fs';

/** user + system CPU seconds of a process (/proc/<pid>/stat, fields 14 and 15, in clock ticks). */
export function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

export const PROBE_ADMIN_TOKEN = `adm_${'x'.repeat(24)}`;

/** Any one service on `databaseUrl` and the machine's Redis (its own key prefix), ports picked by the system. */
export function probeServiceEnv(databaseUrl, keyPrefix) {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_URL: 'redis://127.0.0.1:6379',
    KEY_PREFIX: keyPrefix,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_TOKEN: PROBE_ADMIN_TOKEN,
    METRICS_PORT: '0',
    SANDBOX_PORT: '0',
    HTTP_TRANSPORT_URL: 'http://127.0.0.1:9',
    NODE_ENV: 'development',
    MIN_INTERVAL_SECONDS: '1',
  };
}
