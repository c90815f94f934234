import type { RunCountsLike } from './types.js';
import { windowBottleneck, type WindowRunPace } from './window-bottleneck.js';

export type FinishedStatus = 'success' | 'partial' | 'failed';

/**
 * The final status of a run whose targets were all attempted (none pending or in flight):
 * success when every target was sent, failed when none was, partial otherwise.
 */
export function finishedStatus(counts: RunCountsLike): FinishedStatus {
  if (counts.sent === counts.total) return 'success';
  if (counts.sent === 0) return 'failed';
  return 'partial';
}

/** True when nothing is left to send or to wait for. */
export function isComplete(counts: RunCountsLike): boolean {
  return counts.pending === 0 && counts.inFlight === 0;
}

/**
 * What a closing delivery window does to a run that still has pending targets: a run that
 * never made a send attempt is `failed` (nothing to resume — it fired too late), any other run
 * is `paused` and resumable.
 */
export function statusAtWindowClose(counts: RunCountsLike, anyAttempt: boolean): 'paused' | 'failed' {
  return anyAttempt || counts.sent > 0 || counts.failed > 0 || counts.unknown > 0 ? 'paused' : 'failed';
}

/**
 * The run's errorSummary when its window closes with work pending (CONTRACT §3 wording). With
 * `pace`, the summary goes on to name the bottleneck in numbers (windowBottleneck).
 */
export function windowClosedSummary(counts: RunCountsLike, windowEnd: string, timezone: string, pace?: WindowRunPace): string {
  const still = counts.pending + counts.inFlight;
  const summary =
    `Delivery window closed at ${windowEnd} (${timezone}). ${counts.sent} of ${counts.total} groups delivered, ` +
    `${still} still pending. Resume from the Activity tab. If this happens repeatedly, consider offloading to ` +
    `another paired account, or shrinking the message body / media size to fit more groups in your daily window.`;
  return pace ? `${summary} ${windowBottleneck(counts, pace, timezone)}` : summary;
}

/** Notification texts for a run status change (CONTRACT §3, /v1/events). */
export function notificationFor(status: string, counts: RunCountsLike, campaignName: string): { title: string; body: string } {
  switch (status) {
    case 'paused':
      return { title: 'Reminder paused', body: `${counts.sent} of ${counts.total} groups delivered. Resume from the Activity tab.` };
    case 'success':
      return { title: 'Reminder sent', body: `${campaignName}: all ${counts.total} groups delivered.` };
    case 'partial':
      return { title: 'Reminder partly sent', body: `${campaignName}: ${counts.sent} of ${counts.total} groups delivered.` };
    case 'failed':
      return { title: 'Reminder failed', body: `${campaignName}: no group could be delivered.` };
    case 'cancelled':
      return { title: 'Reminder cancelled', body: `${campaignName}: ${counts.sent} of ${counts.total} groups delivered before it was cancelled.` };
    case 'running':
      return { title: 'Reminder sending', body: `${campaignName}: ${counts.sent} of ${counts.total} groups delivered so far.` };
    default:
      return { title: 'Reminder queued', body: `${campaignName}: ${counts.total} groups to deliver.` };
  }
}
