import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually, GiveUp } from './eventually.js';
import { freePort } from './processes.js';
import { redisAnswers } from './private-redis.js';

const run = promisify(execFile);

/** A Redis Cluster of a test's own: masters on free ports, nothing kept on disk after it stops. */
export interface PrivateRedisCluster {
  ports: number[];
  /** `127.0.0.1:a,127.0.0.1:b,…`, the form REDIS_CLUSTER_NODES takes */
  nodes: string;
  /** runs `redis-cli -p <port> …` against one node and returns its output */
  cli(port: number, ...args: string[]): Promise<string>;
  /** stops every node and removes their directory */
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts `masters` cluster-enabled redis-servers (`redis-server` and `redis-cli` must be on
 * PATH), joins them with `redis-cli --cluster create` (no replicas: the slots are split between
 * the masters) and waits until every node reports `cluster_state:ok`.
 */
export async function startPrivateRedisCluster(masters = 3, timeoutMs = 30_000): Promise<PrivateRedisCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'metronome-redis-cluster-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const cli = async (port: number, ...args: string[]) =>
    (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: timeoutMs })).stdout;
  const stop = async () => {
    await Promise.all(
      children.map((child) => {
        const gone = exited(child);
        child.kill('SIGKILL');
        return gone;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      ports.push(port);
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          path.join(dir, `nodes-${port}.conf`),
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
        ],
        { stdio: 'ignore' },
      );
      child.on('error', () => undefined); // surfaces as the node never answering
      children.push(child);
    }
    for (const [i, port] of ports.entries()) {
      await eventually(
        `redis cluster node ${port} to answer`,
        async () => {
          const child = children[i]!;
          if (child.exitCode !== null || child.signalCode !== null) throw new GiveUp(`redis-server on port ${port} exited; is redis-server installed?`);
          return redisAnswers(port);
        },
        timeoutMs,
        50,
      );
    }
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: timeoutMs });
    // Every node must have learnt the others and the slot map, not only the one asked.
    for (const port of ports) {
      await eventually(
        `redis cluster node ${port} to report cluster_state:ok`,
        async () => {
          const info = await cli(port, 'cluster', 'info');
          return info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${masters}`);
        },
        timeoutMs,
        50,
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { ports, nodes: ports.map((p) => `127.0.0.1:${p}`).join(','), cli, stop };
}
