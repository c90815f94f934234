import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The modules one send passes through: every sender module reachable from the job's entry
// (run-job.ts) by the imports that run code (`import type` only names shapes), and the libs/core
// rules they call. docs/DEVELOPING.md ("One send") draws this path; a module added to it, or a
// rule called from a new place, shows here first. The event bus's wiring (reporting-events.ts
// and the log and metrics subscribers it attaches) is listed apart: it reports what a send did
// and decides nothing in it.

const DIR = path.dirname(fileURLToPath(import.meta.url));
const ENTRY = 'run-job.ts';
const REPORTING = 'reporting-events.ts';

/** The value imports of one source: local modules and the names taken from @metronome/core. */
function importsOf(file: string): { local: string[]; core: string[] } {
  const source = readFileSync(path.join(DIR, file), 'utf8');
  const local: string[] = [];
  const core: string[] = [];
  for (const m of source.matchAll(/^(import|export)\s+(type\s+)?([^;]*?)\s+from\s+'([^']+)';/gms)) {
    if (m[2]) continue;
    const names = [...(m[3] ?? '').matchAll(/(?:^|[{,\s])(type\s+)?([A-Za-z_$][\w$]*)(?:\s+as\s+[\w$]+)?(?=\s*[,}])/g)].filter((n) => !n[1]).map((n) => n[2]!);
    const from = m[4]!;
    if (from.startsWith('./')) {
      if (m[1] === 'export' || names.length > 0 || !m[3]!.includes('{')) local.push(from.slice(2).replace(/\.js$/, '.ts'));
    } else if (from === '@metronome/core') core.push(...names);
  }
  return { local, core };
}

/** The sender modules of one send, in the order a reader meets them, and the core rules they call. */
function sendPath(): { modules: string[]; core: string[]; reporting: string[] } {
  const walk = (entry: string, stop: string[]) => {
    const modules: string[] = [];
    const core = new Set<string>();
    const queue = [entry];
    while (queue.length > 0) {
      const file = queue.shift()!;
      if (modules.includes(file) || stop.includes(file)) continue;
      modules.push(file);
      const { local, core: rules } = importsOf(file);
      for (const r of rules) core.add(r);
      queue.push(...local);
    }
    return { modules, core };
  };
  const send = walk(ENTRY, [REPORTING]);
  const reporting = walk(REPORTING, send.modules);
  return { modules: send.modules, core: [...send.core].sort(), reporting: reporting.modules };
}

test('lists the sender modules one send passes through', () => {
  const { modules } = sendPath();
  expect(modules).toEqual(EXPECTED_MODULES);
});

test('one send passes through at most 6 sender modules', () => {
  expect(sendPath().modules.length).toBeLessThanOrEqual(MAX_SENDER_MODULES);
});

test('the event bus is wired apart from the send: reporting-events.ts and its subscribers', () => {
  expect(sendPath().reporting).toEqual(['reporting-events.ts', 'log-subscriber.ts', 'metrics-subscriber.ts', 'sender-events.ts']);
});

test('reads only value imports: a module named by `import type` alone is not on the path', () => {
  // deps.ts is imported everywhere, but only for its types: the walk must not count it.
  expect(sendPath().modules).not.toContain('deps.ts');
  expect(importsOf('run-job.ts').local).toContain('send-lanes.ts');
});

test('the gate meets every limit through the one list in libs/core', () => {
  expect(sendPath().core).toEqual(expect.arrayContaining(['gateLimit', 'gateLimits']));
});

test('the writes are one object and batch their claims with the core group commit', () => {
  expect(importsOf('send-lanes.ts').local).toContain('writes.ts');
  expect(importsOf('parts.ts').local).not.toContain('writes.ts');
  expect(sendPath().core).toContain('GroupCommit');
});

/** The job, the lanes (the lanes, what they share, one chat's parts), the gate and the writes. */
const EXPECTED_MODULES = ['run-job.ts', 'send-lanes.ts', 'lane-context.ts', 'gate.ts', 'writes.ts', 'parts.ts'];
const MAX_SENDER_MODULES = 6;
