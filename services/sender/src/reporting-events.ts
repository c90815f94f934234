import type { SenderDeps } from './deps.js';
import { subscribeLogs } from './log-subscriber.js';
import { subscribeMetrics } from './metrics-subscriber.js';
import { senderEvents, type SenderEvents } from './sender-events.js';

/** A bus with both subscribers, reporting to `metrics` and `logger`. */
export function reportingEvents(metrics: SenderDeps['metrics'], logger: SenderDeps['logger']): SenderEvents {
  const events = senderEvents();
  subscribeMetrics(events, metrics);
  subscribeLogs(events, logger);
  return events;
}
