import { decideJobEnd, decideJobStart, isCounted, open, type Outcome } from '@metronome/core';
import type { RunForSend } from '@metronome/db';
import type { PaceFloors } from '@metronome/redis';
import type { Transport, TransportAccount } from '@metronome/transports';
import type { JobDeps, SenderDeps } from './deps.js';
import { applyHealth, planHealth } from './account-health.js';
import { applyDecision, handOver } from './job-decision.js';
import { loadJobRun, type RunJobInput } from './job-load.js';
import { withAccountLock } from './job-lock.js';
import { withEvents } from './reporting-events.js';
import { runLanes } from './send-lanes.js';

export type { RunJobInput } from './job-load.js';

/**
 * One sender job: advance one run by at most SENDS_PER_JOB sends under its account's lock,
 * then finish it, pause it, or hand it to a continuation job due exactly when the next send
 * can happen. Returns the job's one outcome (CONTRACT §4). Its steps, in order: load
 * (job-load.ts), decide the start (libs/core), lock the account (job-lock.ts), send (the
 * lanes, send-lanes.ts), decide the end (libs/core), apply it or hand over (job-decision.ts).
 */
export async function processRunJob(input: SenderDeps, job: RunJobInput): Promise<Outcome> {
  const deps = withEvents(input);
  const run = await loadJobRun(deps, job);
  if (typeof run === 'string') return run;

  const now = deps.clock.now();
  const start = decideJobStart(run, now, deps.settings.lockRetryMs);
  if (start.kind !== 'go') return applyDecision(deps, run, start, now, null);

  const transport = deps.transports[run.account.platform];
  if (!transport) {
    deps.events.emit('transport:missing', { runId: run.runId, platform: run.account.platform });
    await deps.repo.runs.pause(run.runId, 'account_unavailable', `This deployment has no ${run.account.platform} transport.`, new Date(now));
    return 'no-account';
  }
  const readiness = await transport.readiness?.(run.account.id);
  if (readiness && !readiness.ready) {
    deps.events.emit('account:elsewhere', { runId: run.runId, accountId: run.account.id, reason: readiness.reason });
    return handOver(deps, run, readiness.retryAfterMs * (1 + deps.random() * 0.5), 'lock-busy');
  }
  const outcome = await withAccountLock(deps, run, (token, floors) => sendAndDecide(deps, run, transport, token, floors));
  if (outcome !== 'busy') return outcome;
  return handOver(deps, run, deps.settings.lockRetryMs * (1 + deps.random() * 0.5), 'lock-busy');
}

/** Under the account lock: start the run, send with its lanes, then decide and apply the job's end. */
async function sendAndDecide(deps: JobDeps, run: RunForSend, transport: Transport, token: string, floors: PaceFloors): Promise<Outcome> {
  // A continuation finds its run already running: skip the write (claims re-check the status).
  if (run.status === 'queued' && !(await deps.repo.runs.markRunning(run.runId, new Date(deps.clock.now())))) return 'inactive-campaign';
  const lanes = run.account.groupConcurrency ?? deps.settings.defaultGroupConcurrency;
  const report = await runLanes(deps, run, transportAccount(deps, run), transport, token, lanes, floors);
  if (report.stop === 'account-unavailable') return 'no-account';
  const health = report.health ?? planHealth(deps, run, report);
  const cooled = await applyHealth(deps, run, health, report.healthWritten).catch((error: unknown) => {
    deps.events.emit('account:health-lost', { accountId: run.account.id, error });
    return null;
  });
  const progress = report.progress ?? (await deps.repo.runs.progress(run.runId));
  const end = deps.clock.now();
  return applyDecision(deps, run, decideJobEnd(progress, report, run, cooled, end, deps.settings.lockRetryMs), end, isCounted(progress) ? progress : null);
}

function transportAccount(deps: JobDeps, run: RunForSend): TransportAccount {
  const credentials = run.account.credentials ? (JSON.parse(open(run.account.credentials, deps.secretsKeys).toString('utf8')) as Record<string, unknown>) : null;
  return { id: run.account.id, externalId: run.account.externalId, credentials };
}
