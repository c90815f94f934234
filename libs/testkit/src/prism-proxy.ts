import { spawn } from 'node:child_process';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { byLine } from './processes.js';

// libs/testkit/{src,dist}/ → the repository root
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PRISM = path.join(ROOT, 'node_modules/@stoplight/prism-cli/dist/index.js');

export interface Violation {
  /** the request it was found on, e.g. "get /v1/runs" (Prism logs violations after the API's answer) */
  request: string;
  /** the API's answer to it (0 when Prism did not forward it) */
  status: number;
  message: string;
}

export interface PrismProxy {
  /** where to send requests: forwarded to the API, each checked against the document */
  url: string;
  violations(): Violation[];
  /** Answers not described, and requests not described that the API accepted (a 4xx to a rejected request agrees). */
  mismatches(): Violation[];
  stop(): Promise<void>;
}

/**
 * Stoplight Prism's validating proxy in front of a running API, checking against its /openapi.json. Requests are always
 * forwarded (no --errors), so callers see the API's own answers; what is not described is collected as violations.
 */
export async function startPrismProxy(apiUrl: string, timeoutMs = 60_000): Promise<PrismProxy> {
  const res = await fetch(`${apiUrl}/openapi.json`);
  if (!res.ok) throw new Error(`${apiUrl}/openapi.json answered ${res.status}`);
  const dir = await mkdtemp(path.join(tmpdir(), 'prism-'));
  const documentPath = path.join(dir, 'openapi.json');
  await writeFile(documentPath, await res.text());
  const child = spawn(process.execPath, [PRISM, 'proxy', documentPath, apiUrl, '--host', '127.0.0.1', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const violations: Violation[] = [];
  let request = '(before any request)';
  let status = 0;
  const methods = new Map<string, string>(); // path → method of the last request received
  let listening: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => (listening = resolve));
  const onLine = byLine((line) => {
    output.push(line);
    if (output.length > 2000) output.shift();
    const received = /\[HTTP SERVER\] (\S+ \S+) .*Request received/.exec(line);
    if (received) {
      const [method, target] = received[1]!.split(' ') as [string, string];
      methods.set(target.split('?')[0]!, method);
      [request, status] = [received[1]!, 0];
    }
    // the answer's line names its path: the violations that follow are that request's
    const answered = /The upstream call to (\S+) has returned (\d+)/.exec(line);
    if (answered) [request, status] = [`${methods.get(answered[1]!.split('?')[0]!) ?? '?'} ${answered[1]}`, Number(answered[2])];
    const violation = /Violation: (.*)$/.exec(line) ?? /(Request terminated with error: .*)$/.exec(line);
    if (violation) violations.push({ request, status, message: violation[1]! });
    const started = /Prism is listening on (http:\/\/\S+)/.exec(line);
    if (started) listening(started[1]!);
  });
  child.stdout.on('data', onLine);
  child.stderr.on('data', onLine);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`prism: not listening within ${timeoutMs} ms. Output:\n${output.slice(-20).join('\n')}`)), timeoutMs);
    void exited.then(() => reject(new Error(`prism exited. Output:\n${output.slice(-20).join('\n')}`)));
  });
  failed.catch(() => undefined); // it also rejects when a started proxy is stopped
  try {
    const mismatches = () => violations.filter((v) => !(v.message.startsWith('request') && v.status >= 400 && v.status < 500));
    return { url: await Promise.race([url, failed]), violations: () => [...violations], mismatches, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
