import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { eventually, GiveUp } from './eventually.js';
import { freePort } from './processes.js';

/** A redis-server of a test's own, on a free port, keeping nothing on disk: kill it and restart it empty. */
export interface PrivateRedis {
  port: number;
  url: string;
  /** SIGKILL: the server and everything it held are gone at once */
  kill(): Promise<void>;
  /** starts it again, empty, on the same port; resolves when it answers PING */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** True when a server on `port` answers PING with PONG. */
export function redisAnswers(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

function spawnServer(port: number): ChildProcess {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', os.tmpdir()], {
    stdio: 'ignore',
  });
  child.on('error', () => undefined); // surfaces as the server never answering
  return child;
}

async function untilAnswering(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  await eventually(
    `redis-server on port ${port} to answer`,
    async () => {
      if (await redisAnswers(port)) return true;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new GiveUp(`redis-server on port ${port} exited (${child.exitCode ?? child.signalCode}); is redis-server installed?`);
      return false;
    },
    timeoutMs,
    20,
  );
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts a private redis-server (`redis-server` must be on PATH) and waits until it answers. */
export async function startPrivateRedis(timeoutMs = 10_000): Promise<PrivateRedis> {
  const port = await freePort();
  let child = spawnServer(port);
  await untilAnswering(port, child, timeoutMs);
  const kill = async () => {
    const gone = exited(child);
    child.kill('SIGKILL');
    await gone;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    restart: async () => {
      await kill();
      child = spawnServer(port);
      await untilAnswering(port, child, timeoutMs);
    },
    stop: kill,
  };
}
