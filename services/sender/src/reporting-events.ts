import type { JobDeps, SenderDeps } from './deps.js';
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

/**
 * The deps with their event bus. Deps built without one (the test harness builds its own)
 * get one, once, wired to their own metrics and logger: they report what main.ts's would.
 */
export function withEvents(deps: SenderDeps): JobDeps {
  deps.events ??= reportingEvents(deps.metrics, deps.logger);
  return deps as JobDeps;
}
