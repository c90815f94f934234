// `npm run <script>` as docker compose runs it, in a process group of its own, so a test can
// signal npm alone and tell whether anything outlives it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { byLine, eventually } from '@metronome/testkit';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface NpmService {
  npm: ChildProcess;
  lines: Record<string, unknown>[];
  waitFor(what: string, match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm run <script>` in a process group of its own, so the test can tell whether anything outlives npm. */
export function npmRun(script: string, env: Record<string, string>): NpmService {
  const npm = spawn('npm', ['run', script], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const waiters = new Set<() => void>();
  const onData = byLine((line) => {
    raw.push(line);
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      return; // npm's own banner lines
    }
    for (const wake of [...waiters]) wake();
  });
  npm.stdout!.on('data', onData);
  npm.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (what: string, match: (line: Record<string, unknown>) => boolean, timeoutMs = 15_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const found = lines.find(match);
        if (!found) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`npm run ${script}: no log line for ${what} within ${timeoutMs} ms. Output:\n${raw.slice(-20).join('\n')}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { npm, lines, waitFor, exited };
}

/** Whether any process is left in the group `pgid`. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function groupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  return eventually(`process group ${pgid} to exit`, async () => !groupAlive(pgid), timeoutMs, 50).then(
    () => true,
    () => false,
  );
}
