import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// libs/testkit/{src,dist}/ → the repository root
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** A service started from its build output as a real process, with its output kept for failures. */
export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  output: string[];
  /** resolves with the first parsed JSON log line matching `match` */
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Calls `onLine` with each whole line of a child's output, however its chunks are cut. */
export function byLine(onLine: (line: string) => void): (chunk: Buffer) => void {
  let buffer = '';
  return (chunk) => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      onLine(line);
    }
  };
}

/** Starts `services/<dir>/dist/<entry>` with `env` added to this process's environment. */
export function startService(name: string, script: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [path.join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  const onData = byLine((line) => {
    output.push(line);
    if (output.length > 5000) output.shift();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    for (const w of [...waiters]) {
      if (w.match(parsed)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(parsed);
      }
    }
  });
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    name,
    child,
    output,
    // a net against a hang, not a speed check: a start-up under heavy load can take over 20 s
    waitForLog: (match, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        for (const line of output) {
          try {
            const parsed = JSON.parse(line) as Record<string, unknown>;
            if (match(parsed)) return resolve(parsed);
          } catch {
            // not a JSON line
          }
        }
        const timer = setTimeout(
          () => reject(new Error(`${name}: no matching log line within ${timeoutMs} ms. Last output:\n${output.slice(-20).join('\n')}`)),
          timeoutMs,
        );
        const done = (l: Record<string, unknown>) => {
          clearTimeout(timer);
          resolve(l);
        };
        waiters.push({ match, resolve: done });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited with ${code}. Output:\n${output.slice(-30).join('\n')}`));
        });
      }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}
