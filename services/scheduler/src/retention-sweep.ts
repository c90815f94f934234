import type { Clock } from '@metronome/core';
import type { ErasureRepository, RetentionPolicy, RetentionRepository } from '@metronome/db';

/** What a sweep deleted, by kind (the metric's label). */
export type SweptKind = 'targets' | 'events' | 'runs' | 'webhook_deliveries' | 'media' | 'tenant_rows';

/** Due runs handled together. */
const DUE_PAGE = 200;

export interface RetentionSweepDeps {
  retention: RetentionRepository;
  erasure: ErasureRepository;
  clock: Clock;
  policy: RetentionPolicy;
  /** rows per statement */
  batch: number;
  /** a breath between statements, so the sweep never holds the database for long stretches */
  pauseMs: number;
  /** false once the replica stops leading or is stopping: the sweep ends after its statement */
  keepGoing: () => boolean;
  counted: (kind: SweptKind, rows: number) => void;
}

/**
 * One pass of the retention sweep (docs/DESIGN.md, "Retention"): deleted tenants' rows, then
 * the targets and events of finished runs past HISTORY_RETENTION (their summary kept), run
 * summaries past RUN_SUMMARY_RETENTION, settled webhook deliveries and unused media. Every
 * statement takes at most `batch` rows and commits alone; a pass cut short (a restart, a lost
 * lead) leaves nothing half-done that the next pass does not finish. Returns the rows deleted.
 */
export async function retentionSweep(deps: RetentionSweepDeps): Promise<number> {
  const { retention, erasure, policy, batch } = deps;
  let total = 0;
  const step = async (kind: SweptKind, work: () => Promise<number>): Promise<number> => {
    const n = await work();
    if (n > 0) deps.counted(kind, n);
    total += n;
    if (deps.pauseMs > 0) await new Promise((done) => setTimeout(done, deps.pauseMs));
    return n;
  };
  const now = () => new Date(deps.clock.now());

  for (const tenantId of await erasure.deletedTenants()) {
    while (deps.keepGoing()) {
      const runs = await erasure.purgeRunsBatch({ tenantId }, batch);
      if (runs.deleted > 0) {
        await step(runs.kind, async () => runs.deleted);
        continue;
      }
      if ((await step('tenant_rows', () => erasure.purgeTenantBatch(tenantId, batch))) === 0) break;
    }
  }

  // due runs a page at a time: their counts kept, then their targets and events in batches
  // across the page (most runs have a few dozen chats), then they become summaries
  while (deps.keepGoing()) {
    const due = await retention.dueHistory(now(), policy, DUE_PAGE);
    if (due.length === 0) break;
    await retention.keepSummaries(due);
    while (deps.keepGoing() && (await step('targets', () => retention.deleteTargets(due, batch))) > 0);
    while (deps.keepGoing() && (await step('events', () => retention.deleteEvents(due, batch))) > 0);
    if (!deps.keepGoing()) return total;
    await retention.markPurged(due, now());
    if (due.length < DUE_PAGE) break;
  }
  while (deps.keepGoing() && (await step('runs', () => retention.deleteSummaries(now(), policy, batch))) > 0);
  while (deps.keepGoing() && (await step('webhook_deliveries', () => retention.deleteSettledDeliveries(now(), policy, batch))) > 0);
  while (deps.keepGoing() && (await step('media', () => retention.deleteUnusedMedia(now(), policy, batch))) > 0);
  return total;
}
