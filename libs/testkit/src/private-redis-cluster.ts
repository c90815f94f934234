import net from 'node:net';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually, GiveUp } from './eventually.js';
import { freePort } from './processes.js';
import { redisAnswers } from './private-redis.js';

const run = promisify(execFile);

/** A Redis Cluster of a test's own: nodes on free ports, nothing kept on disk after it stops. */
export interface PrivateRedisCluster {
  ports: number[];
  /** the masters' ports as the cluster was made (a failover promotes a replica later) */
  masters: number[];
  /** `127.0.0.1:a,127.0.0.1:b,…`, the form REDIS_CLUSTER_NODES takes */
  nodes: string;
  cli(port: number, ...args: string[]): Promise<string>;
  /** the master serving `key`'s slot and its replicas, as a node that is still up sees them */
  slotOwner(key: string): Promise<{ slot: number; master: number; replicas: number[] }>;
  /** SIGKILL one node: it and what it held are gone at once */
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface PrivateRedisClusterOptions {
  masters?: number;
  /** replicas of each master (0: the slots are split between the masters, no failover) */
  replicas?: number;
  /** the nodes' `cluster-node-timeout`; a failover takes about 1.5–2 times this */
  nodeTimeoutMs?: number;
  timeoutMs?: number;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts cluster-enabled redis-servers and waits for `cluster_state:ok` and synced replicas; a number is the masters, no replicas. */
/** A free port whose cluster bus port (10,000 above it, as Redis binds it) is free too: a node that cannot bind both exits. */
async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 <= 65_535 && (await portFree(port + 10_000))) return port;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function startPrivateRedisCluster(options: number | PrivateRedisClusterOptions = 3, startTimeoutMs = 30_000): Promise<PrivateRedisCluster> {
  const o = typeof options === 'number' ? { masters: options } : options;
  const masterCount = o.masters ?? 3;
  const replicas = o.replicas ?? 0;
  const timeoutMs = o.timeoutMs ?? startTimeoutMs;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'metronome-redis-cluster-'));
  const children = new Map<number, ChildProcess>();
  const ports: number[] = [];
  const masters: number[] = [];
  const cli = async (port: number, ...args: string[]) =>
    (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: timeoutMs })).stdout;
  const kill = async (port: number) => {
    const child = children.get(port);
    if (!child) return;
    const gone = exited(child);
    child.kill('SIGKILL');
    await gone;
  };
  const stop = async () => {
    await Promise.all([...children.keys()].map(kill));
    await rm(dir, { recursive: true, force: true });
  };
  const slotOwner = async (key: string) => {
    for (const port of ports) {
      if (!(await redisAnswers(port))) continue;
      const slot = Number((await cli(port, 'cluster', 'keyslot', key)).trim());
      // `cluster nodes`: id addr flags master-id ping pong epoch link [slot ranges…]
      const lines = (await cli(port, 'cluster', 'nodes')).trim().split('\n');
      const nodes = lines.map((l) => l.split(' '));
      const master = nodes.find((n) => n[2]!.includes('master') && !n[2]!.includes('fail') && n.slice(8).some((r) => inRange(slot, r)));
      if (!master) throw new Error(`no master serves slot ${slot} as 127.0.0.1:${port} sees it`);
      const portOf = (n: string[]) => Number(n[1]!.split('@')[0]!.split(':')[1]);
      return { slot, master: portOf(master), replicas: nodes.filter((n) => n[3] === master[0]).map(portOf) };
    }
    throw new Error('no node of the cluster answers');
  };
  try {
    for (let i = 0; i < masterCount * (1 + replicas); i++) {
      const port = await freeClusterPort();
      ports.push(port);
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', path.join(dir, `nodes-${port}.conf`)];
      if (o.nodeTimeoutMs) args.push('--cluster-node-timeout', String(o.nodeTimeoutMs));
      // a replica's first sync at once, not after Redis' 5 s wait for more replicas to share it
      if (replicas > 0) args.push('--repl-diskless-sync-delay', '0');
      const child = spawn('redis-server', [...args, '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
      child.on('error', () => undefined); // surfaces as the node never answering
      children.set(port, child);
    }
    for (const port of ports) {
      await eventually(
        `redis cluster node ${port} to answer`,
        async () => {
          const child = children.get(port)!;
          if (child.exitCode !== null || child.signalCode !== null) throw new GiveUp(`redis-server on port ${port} exited; is redis-server installed?`);
          return redisAnswers(port);
        },
        timeoutMs,
        50,
      );
    }
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'], {
      timeout: timeoutMs,
    });
    // Every node must know the others and the slot map; a replica must hold its master's data before a failover can promote it.
    for (const port of ports) {
      await eventually(
        `redis cluster node ${port} to report cluster_state:ok`,
        async () => {
          const info = await cli(port, 'cluster', 'info');
          if (!info.includes('cluster_state:ok') || !info.includes(`cluster_known_nodes:${ports.length}`)) return false;
          const replication = await cli(port, 'info', 'replication');
          return replication.includes('role:master') || replication.includes('master_link_status:up');
        },
        timeoutMs,
        50,
      );
    }
    const roles = await Promise.all(ports.map(async (port) => ((await cli(port, 'role')).startsWith('master') ? port : null)));
    masters.push(...roles.filter((p) => p !== null));
  } catch (error) {
    await stop();
    throw error;
  }
  return { ports, masters, nodes: ports.map((p) => `127.0.0.1:${p}`).join(','), cli, slotOwner, kill, stop };
}

function inRange(slot: number, range: string): boolean {
  if (range.startsWith('[')) return false; // a slot being migrated
  const [from, to = from] = range.split('-').map(Number);
  return slot >= from! && slot <= to!;
}
