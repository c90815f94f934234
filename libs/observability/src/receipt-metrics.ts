import type { Metrics } from './metrics.js';

/** What a receipt write reports (structurally libs/db ReceiptOutcome; observability does not depend on it). */
export interface CountedReceipts {
  receipts: readonly { status: 'delivered' | 'read' }[];
  matched: readonly boolean[];
  changed: readonly { sentAt: Date | null; deliveredAt: Date | null; readAt: Date | null; firstDelivered: boolean; firstRead: boolean }[];
}

/** `metronome_receipts_total{status}` (`unknown`: no sent message of the account) and the first delivery/read delay. */
export function countReceipts(metrics: Metrics, platform: string, c: CountedReceipts): void {
  let delivered = 0;
  let read = 0;
  let unknown = 0;
  c.receipts.forEach((r, i) => {
    if (!c.matched[i]) unknown++;
    else if (r.status === 'read') read++;
    else delivered++;
  });
  if (delivered > 0) metrics.receipts.inc({ platform, status: 'delivered' }, delivered);
  if (read > 0) metrics.receipts.inc({ platform, status: 'read' }, read);
  if (unknown > 0) countUnknown(metrics, platform, unknown);
  for (const t of c.changed) {
    if (!t.sentAt) continue;
    if (t.firstDelivered && t.deliveredAt)
      metrics.receiptDelay.observe({ platform, status: 'delivered' }, Math.max(0, t.deliveredAt.getTime() - t.sentAt.getTime()) / 1000);
    if (t.firstRead && t.readAt) metrics.receiptDelay.observe({ platform, status: 'read' }, Math.max(0, t.readAt.getTime() - t.sentAt.getTime()) / 1000);
  }
}

/** `metronome_receipts_total{status="unknown"}`: receipts that named nothing of theirs. */
export function countUnknown(metrics: Metrics, platform: string, n: number): void {
  metrics.receipts.inc({ platform, status: 'unknown' }, n);
}
