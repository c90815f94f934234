import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// docker-compose.yml as the deployment users run: it must validate, pin every image, give every
// long-running service a healthcheck, and run node itself (no npm or shell in between, so
// `docker compose stop` reaches node). No Docker engine is needed: `docker-compose config` only
// reads and resolves the file.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const installed = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;
if (!installed) throw new Error('docker-compose is not installed: run `sudo apt-get install -y docker-compose` (CI does this in .ci/run)');

/** The resolved file (anchors and merges applied), as docker-compose prints it. */
function resolved(): string {
  return execFileSync('docker-compose', ['config'], {
    cwd: ROOT,
    env: { ...process.env, ADMIN_TOKEN: 'test-admin-token', SECRETS_KEY: 'test-key' },
    encoding: 'utf8',
  });
}

/** Each top-level service's block of the resolved YAML. */
function services(text: string): Map<string, string> {
  const start = /(^|\n)services:\n/.exec(text);
  if (!start) throw new Error('no services in the resolved file');
  const body = text.slice(start.index + start[0].length).split(/\n(?=\S)/)[0]!;
  const blocks = new Map<string, string>();
  for (const block of body.split(/\n(?= {2}[a-z][\w-]*:\n)/)) {
    const name = /^\s*([a-z][\w-]*):/.exec(block)?.[1];
    if (name) blocks.set(name, block);
  }
  return blocks;
}

test('docker-compose.yml validates, pins every image, checks every service, and runs node directly', () => {
  const all = services(resolved());
  expect([...all.keys()].sort()).toEqual(['api', 'grafana', 'migrate', 'postgres', 'prometheus', 'redis', 'sandbox', 'scheduler', 'sender']);
  for (const [name, block] of all) {
    const image = /\n {4}image: (\S+)/.exec(block)?.[1] ?? '';
    // pinned: a tag with a version number, never `latest` or no tag (our own build aside)
    if (image !== 'metronome:local')
      expect({ name, image, pinned: /:[^:]*\d+\.\d+/.test(image) && !image.endsWith(':latest') }).toEqual({ name, image, pinned: true });
    if (name !== 'migrate') expect({ name, healthcheck: block.includes('\n    healthcheck:') }).toEqual({ name, healthcheck: true });
    if (image === 'metronome:local') {
      // exec form, node first: no npm, no shell
      expect({ name, command: /\n {4}command:\n {4}- node\n/.test(block) }).toEqual({ name, command: true });
    }
  }
});

test('Prometheus gets its config and the alert rules it loads; Grafana its data source and dashboard', () => {
  const all = services(resolved());
  const prometheus = all.get('prometheus') ?? '';
  // infra/prometheus.yml loads `prometheus/alerts.yml`, relative to itself
  expect(prometheus).toContain(`${ROOT}/infra/prometheus.yml:/etc/prometheus/prometheus.yml:ro`);
  expect(prometheus).toContain(`${ROOT}/infra/prometheus:/etc/prometheus/prometheus:ro`);
  // the API's healthcheck calls /readyz: the 503s it counts are what MetronomePostgresOrRedisUnreachable sees
  expect(all.get('api')).toContain('http://127.0.0.1:8080/readyz');
  const grafana = all.get('grafana') ?? '';
  expect(grafana).toContain(`${ROOT}/infra/grafana/provisioning/datasources:/etc/grafana/provisioning/datasources:ro`);
  expect(grafana).toContain(`${ROOT}/infra/grafana/provisioning/dashboards:/etc/grafana/provisioning/dashboards:ro`);
  // the dashboards provider reads the folder the dashboards are mounted at
  expect(grafana).toContain(`${ROOT}/infra/grafana/dashboards:/var/lib/grafana/dashboards:ro`);
  expect(grafana).toMatch(/\n {6}- http:\/\/127\.0\.0\.1:3000\/api\/health\n/);
});

test('each of our services stops within its own deadline, a little under the grace period compose gives it', () => {
  for (const [name, block] of services(resolved())) {
    if (!block.includes('\n    image: metronome:local') || name === 'migrate') continue;
    const graceMs = Number(/\n {4}stop_grace_period: (\d+)s(?:\n|$)/.exec(block)?.[1]) * 1000;
    const deadlineMs = Number(/\n {6}STOP_DEADLINE_MS: '?(\d+)'?\n/.exec(block)?.[1]);
    // under the grace, so the service and not a SIGKILL ends the stop; near it, so the drain gets the time
    expect({ name, fits: deadlineMs < graceMs && deadlineMs >= graceMs - 10_000 }).toEqual({ name, fits: true });
  }
});
