import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually, freePort, GiveUp } from '@metronome/testkit';
import { ROOT } from './dashboard.js';

// Debian's Prometheus (`/usr/bin/prometheus`) as a child process of a test: its own port and
// temporary storage, never the machine's own Prometheus service.

const BINARY = '/usr/bin/prometheus';
if (spawnSync(BINARY, ['--version'], { stdio: 'ignore' }).status !== 0) {
  throw new Error(`${BINARY} is not installed: run \`sudo apt-get install -y prometheus\` (CI does this in .ci/run)`);
}

export interface PrometheusServer {
  url: string;
  /** GET on its HTTP API, `data` of the answer; throws on anything but `status: success` */
  api<T = any>(pathAndQuery: string): Promise<T>;
  /** what it printed, for a failure's message */
  output(): string;
  stop(): Promise<void>;
}

/** The scrape jobs of infra/prometheus.yml, by name, and its rule files resolved from infra/. */
export function composeConfig(): { jobs: string[]; ruleFiles: string[] } {
  const text = readFileSync(path.join(ROOT, 'infra/prometheus.yml'), 'utf8');
  const jobs = [...text.matchAll(/^\s*- job_name: (\S+)$/gm)].map((m) => m[1]!);
  const rules = /^rule_files:\n((?:\s+- \S+\n)+)/m.exec(text)?.[1] ?? '';
  const ruleFiles = [...rules.matchAll(/- (\S+)/g)].map((m) => path.join(ROOT, 'infra', m[1]!));
  return { jobs, ruleFiles };
}

/**
 * Starts Prometheus scraping `targets` (job → host:port list) every `intervalSeconds` and
 * evaluating `ruleFiles` as often; resolves once it is ready.
 */
export async function startPrometheus(targets: Record<string, string[]>, ruleFiles: string[], intervalSeconds = 1): Promise<PrometheusServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'metronome-prometheus-'));
  const config = [
    'global:',
    `  scrape_interval: ${intervalSeconds}s`,
    `  scrape_timeout: ${intervalSeconds}s`,
    `  evaluation_interval: ${intervalSeconds}s`,
    'rule_files:',
    ...ruleFiles.map((f) => `  - ${JSON.stringify(f)}`),
    'scrape_configs:',
    ...Object.entries(targets).flatMap(([job, hosts]) => [`  - job_name: ${job}`, `    static_configs: [{ targets: ${JSON.stringify(hosts)} }]`]),
  ].join('\n');
  writeFileSync(path.join(dir, 'prometheus.yml'), `${config}\n`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(
    BINARY,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      'prometheus to be ready',
      async () => {
        if (
          await fetch(`${url}/-/ready`).then(
            (r) => r.ok,
            () => false,
          )
        )
          return true;
        if (child.exitCode !== null) throw new GiveUp('prometheus exited');
        return false;
      },
      30_000,
      200,
    );
  } catch {
    await stop();
    throw new Error(`prometheus did not become ready:\n${output}`);
  }
  return {
    url,
    async api<T>(pathAndQuery: string): Promise<T> {
      const body = (await (await fetch(`${url}${pathAndQuery}`)).json()) as { status: string; data: T; error?: string };
      if (body.status !== 'success') throw new Error(`prometheus ${pathAndQuery}: ${body.error ?? body.status}`);
      return body.data;
    },
    output: () => output,
    stop,
  };
}
