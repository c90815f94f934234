// Drives bench/probes/connect-trace.mjs in the senders from a scenario (PROBE_TRACE_DIR set): start each live sender's
// trace over at a stop, and write what each traced since under a label (`<label>-<pid>.trace.json` and `.cpuprofile`).
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.PROBE_TRACE_DIR;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(done, ms = 15_000) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (done()) return true;
  return false;
}

/** Every live sender's trace starts over now. */
export async function traceReset(live) {
  if (!dir) return;
  for (const { pid } of live) {
    const flag = join(dir, `reset-${pid}`);
    writeFileSync(flag, '');
    process.kill(pid, 'SIGUSR2');
    await until(() => !existsSync(flag));
  }
}

/** Every live sender writes what it traced since its last reset or dump, kept as `<label>-<pid>.*`. */
export async function traceDump(live, label) {
  if (!dir) return;
  for (const { pid } of live) {
    const done = join(dir, `${pid}.done`);
    process.kill(pid, 'SIGUSR2');
    if (!(await until(() => existsSync(done)))) continue;
    rmSync(done);
    for (const ext of ['trace.json', 'cpuprofile']) renameSync(join(dir, `${pid}.${ext}`), join(dir, `${label}-${pid}.${ext}`));
  }
}
