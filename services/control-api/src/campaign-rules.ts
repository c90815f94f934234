import { cronGapProblem, cronProblem, isTimeOfDay, isValidTimezone, windowProblem, type DeliveryWindow } from '@metronome/core';
import type { MessagePart, Schedule } from '@metronome/db';
import type { FieldProblem } from './errors.js';
import { keyOfTarget, type CampaignTarget } from './personal-rules.js';
import { storableInstant, TIME_RANGE } from './schemas/common.js';

/** The parts of a campaign whose rules span fields or depend on configuration. */
export interface CampaignDraft {
  timezone: string;
  schedule: Schedule;
  deliveryWindow: DeliveryWindow;
  messages: MessagePart[];
  targets: CampaignTarget[];
  /** the audiences whose members each run also sends to (their tenant is new-campaign.ts's to check) */
  audienceIds: string[];
}

/**
 * What is wrong with a campaign beyond its shape (which zod checks): an unknown timezone, a
 * window that is empty, a cron that is not five fields or never fires, an interval or cron whose
 * runs could come closer together than the configured minimum, repeated targets. Empty when
 * acceptable. Pure (`now` is where cron checks start), so create and PATCH (on the merged
 * campaign) apply the very same rules.
 */
export function campaignProblems(c: CampaignDraft, minIntervalSeconds: number, now: Date): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const zoneOk = isValidTimezone(c.timezone);
  if (!zoneOk) problems.push({ field: 'timezone', message: `unknown IANA timezone "${c.timezone}"` });

  const window = windowProblem(c.deliveryWindow);
  if (window) problems.push({ field: windowField(c.deliveryWindow), message: window });

  if (c.schedule.type === 'interval' && c.schedule.everySeconds < minIntervalSeconds) {
    problems.push({ field: 'schedule.everySeconds', message: `must be at least ${minIntervalSeconds}` });
  }
  // A cron is read in the campaign's zone; with an unknown zone it cannot be checked.
  if (c.schedule.type === 'cron' && zoneOk) {
    const cron = cronProblem(c.schedule.expression, c.timezone, now) ?? cronGapProblem(c.schedule.expression, c.timezone, minIntervalSeconds, now);
    if (cron) problems.push({ field: 'schedule.expression', message: cron });
  }

  // The request's own instants were range-checked by its schema; this catches a stored schedule
  // from before that check, which a PATCH of other fields would otherwise carry on.
  const instant = scheduleInstant(c.schedule);
  if (instant && !storableInstant(Date.parse(instant.value))) {
    problems.push({ field: instant.field, message: TIME_RANGE });
  }

  if (c.targets.length === 0 && c.audienceIds.length === 0) {
    problems.push({ field: 'targets', message: 'a campaign needs at least one target, or an audience in audienceIds' });
  }
  const audiences = new Set<string>();
  c.audienceIds.forEach((a, i) => {
    if (audiences.has(a)) problems.push({ field: `audienceIds.${i}`, message: 'repeated audience' });
    audiences.add(a);
  });

  const seen = new Set<string>();
  // a target is its chat and topic: the same chat in two topics is two targets
  const repeated = c.targets.filter((t) => {
    const key = keyOfTarget(t);
    return seen.has(key) ? true : (seen.add(key), false);
  });
  if (repeated.length > 0) {
    const shown = [
      ...new Set(
        repeated.map((t) =>
          typeof t === 'string' || t.threadId === undefined ? JSON.stringify(keyOfTarget(t)) : `${JSON.stringify(t.chatId)} topic ${t.threadId}`,
        ),
      ),
    ].slice(0, 5);
    problems.push({ field: 'targets', message: `targets must be distinct; repeated: ${shown.join(', ')}` });
  }
  return problems;
}

function scheduleInstant(s: Schedule): { field: string; value: string } | null {
  if (s.type === 'once') return { field: 'schedule.at', value: s.at };
  if (s.type === 'interval' && s.startAt !== undefined) return { field: 'schedule.startAt', value: s.startAt };
  return null;
}

// windowProblem says what is wrong; this says which field, so the error can name it.
function windowField(w: DeliveryWindow): string {
  if (!isTimeOfDay(w.start) || w.start === '24:00') return 'deliveryWindow.start';
  if (!isTimeOfDay(w.end)) return 'deliveryWindow.end';
  return 'deliveryWindow';
}

/**
 * A schedule as it is stored: instants as UTC ISO strings, keys in one order (jsonb reorders
 * keys, so schedules are compared through this).
 */
export function normaliseSchedule(s: Schedule): Schedule {
  switch (s.type) {
    case 'interval':
      return s.startAt === undefined
        ? { type: 'interval', everySeconds: s.everySeconds }
        : { type: 'interval', everySeconds: s.everySeconds, startAt: new Date(s.startAt).toISOString() };
    case 'cron':
      return { type: 'cron', expression: s.expression };
    case 'once':
      return { type: 'once', at: new Date(s.at).toISOString() };
  }
}

/** The media ids a campaign's parts use, with the field that names each. */
export function mediaRefs(messages: MessagePart[]): { mediaId: string; field: string }[] {
  return messages.flatMap((m, i) => (m.type === 'media' ? [{ mediaId: m.mediaId, field: `messages.${i}.mediaId` }] : []));
}
