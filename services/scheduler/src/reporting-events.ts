import type { Logger, Metrics } from '@metronome/observability';
import { subscribeLogs } from './log-subscriber.js';
import { subscribeMetrics } from './metrics-subscriber.js';
import { schedulerEvents, type SchedulerEvents } from './scheduler-events.js';

/** A bus with both subscribers, reporting to `metrics` and `logger`. */
export function reportingEvents(metrics: Metrics, logger: Logger): SchedulerEvents {
  const events = schedulerEvents();
  subscribeMetrics(events, metrics);
  subscribeLogs(events, logger);
  return events;
}

/** The deps' event bus; deps built without one (tests) get one wired to their own metrics and logger. */
export function eventsOf(deps: { events?: SchedulerEvents; metrics: Metrics; logger: Logger }): SchedulerEvents {
  deps.events ??= reportingEvents(deps.metrics, deps.logger);
  return deps.events;
}
