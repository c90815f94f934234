import type { Clock } from '@metronome/core';
import type { ErasureRepository, RetentionPolicy, RetentionRepository } from '@metronome/db';

/** What a sweep deleted, by kind (the metric's label). */
export type SweptKind = 'targets' | 'events' | 'runs' | 'webhook_deliveries' | 'media' | 'tenant_rows';

const DUE_PAGE = 200;

export interface RetentionSweepDeps {
  retention: RetentionRepository;
  erasure: ErasureRepository;
  clock: Clock;
  policy: RetentionPolicy;
  batch: number;
  /** a breath between statements */
  pauseMs: number;
  /** false once the replica stops leading or stops: the sweep ends after its statement */
  keepGoing: () => boolean;
  counted: (kind: SweptKind, rows: number) => void;
}

/**
 * One pass of the retention sweep (docs/DESIGN.md, "Retention"): deleted tenants' rows, finished runs' targets and
 * events (summaries kept), old summaries, settled deliveries, unused media; each statement commits alone. Rows deleted.
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

  // due runs a page at a time: counts kept, targets and events deleted in batches, then summaries
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
