import type { RunCountsLike } from './types.js';
import { windowBottleneck, type WindowRunPace } from './window-bottleneck.js';

export type FinishedStatus = 'success' | 'partial' | 'failed';

export function finishedStatus(counts: RunCountsLike): FinishedStatus {
  if (counts.sent === counts.total) return 'success';
  if (counts.sent === 0) return 'failed';
  return 'partial';
}

export function isComplete(counts: RunCountsLike): boolean {
  return counts.pending === 0 && counts.inFlight === 0;
}

/** A run that never attempted a send fails when its window closes (it fired too late); any other pauses, resumable. */
export function statusAtWindowClose(counts: RunCountsLike, anyAttempt: boolean): 'paused' | 'failed' {
  return anyAttempt || counts.sent > 0 || counts.failed > 0 || counts.unknown > 0 ? 'paused' : 'failed';
}

/** The run's errorSummary when its window closes with work pending (CONTRACT §3 wording), naming the bottleneck when `pace` is given. */
export function windowClosedSummary(counts: RunCountsLike, windowEnd: string, timezone: string, pace?: WindowRunPace): string {
  const still = counts.pending + counts.inFlight;
  const summary =
    `Delivery window closed at ${windowEnd} (${timezone}). ${counts.sent} of ${counts.total} groups delivered, ` +
    `${still} still pending. Resume from the Activity tab. If this happens repeatedly, consider offloading to ` +
    `another paired account, or shrinking the message body / media size to fit more groups in your daily window.`;
  return pace ? `${summary} ${windowBottleneck(counts, pace, timezone)}` : summary;
}

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
