import type { Metrics } from '@metronome/observability';

/** A socket opening or closing, as the WhatsApp socket pool reports it. */
export type SocketEvent = { kind: 'opened' } | { kind: 'closed'; wasOpen: boolean; why: string };

/** Counts a platform's socket openings and closings and how many are open: every opening is a login the platform sees. */
export function countSockets(metrics: Metrics, platform: string): (event: SocketEvent) => void {
  return (event) => {
    if (event.kind === 'opened') {
      metrics.platformConnections.inc({ platform, event: 'opened', reason: '' });
      metrics.platformSocketsOpen.inc({ platform });
      return;
    }
    // the pool's reasons are a small fixed set ('handed over', 'lease lost', pairing codes…)
    metrics.platformConnections.inc({ platform, event: 'closed', reason: event.why.replace(/\W+/g, '_') });
    if (event.wasOpen) metrics.platformSocketsOpen.dec({ platform });
  };
}
