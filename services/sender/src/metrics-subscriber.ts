import type { SendOutcome } from '@metronome/core';
import { subscribe, type Metrics } from '@metronome/observability';
import type { SenderEvents } from './sender-events.js';

/** The `result` label of metronome_sends_total for each kind of answer (CONTRACT §6). */
const SEND_RESULT: Record<SendOutcome['kind'], 'sent' | 'retry' | 'failed' | 'unknown'> = {
  'sent-last': 'sent',
  'next-part': 'sent',
  'account-wait': 'retry',
  'chat-wait': 'retry',
  'stop-account': 'retry',
  retry: 'retry',
  // not delivered: the chat is sent again under its new id
  'chat-moved': 'retry',
  fail: 'failed',
  unknown: 'unknown',
  // in doubt, sent again with the same key to a platform that deduplicates
  settle: 'retry',
};

/** Turns the sender's events into its metrics. The names and labels are the contract (docs/CONTRACT.md §6, infra alert rules); returns the unsubscribe. */
export function subscribeMetrics(events: SenderEvents, metrics: Metrics): () => void {
  return subscribe(events, {
    'job:start': (e) => metrics.jobWait.observe(Math.max(0, e.waitMs) / 1000),
    'job:outcome': (e) => {
      metrics.jobOutcomes.inc({ outcome: e.outcome });
      metrics.jobSeconds.observe(e.heldMs / 1000);
    },
    'run:first-send': (e) => metrics.runStartLag.observe({ trigger: e.trigger }, Math.max(0, e.lagMs) / 1000),
    'send:result': (e) => {
      const { outcome } = e;
      metrics.sends.inc({ platform: e.platform, result: SEND_RESULT[outcome.kind] });
      if (outcome.kind === 'account-wait') metrics.providerWait.inc({ scope: 'account' }, outcome.retryAfterMs / 1000);
      if (outcome.kind === 'chat-wait') metrics.providerWait.inc({ scope: 'chat' }, outcome.retryAfterMs / 1000);
    },
    'account:cooling': (e) => metrics.accountCooling.inc({ platform: e.platform, reason: e.reason }),
    'directory:synced': (e) => {
      metrics.directorySyncs.inc({ platform: e.platform, status: e.status });
      metrics.directorySyncSeconds.observe({ platform: e.platform }, e.heldMs / 1000);
    },
    'send:settled': (e) => metrics.unknownSettled.inc({ platform: e.platform }),
    'directory:failed': (e) => metrics.directorySyncs.inc({ platform: e.platform, status: 'failed' }),
  });
}
