import { isValidTimezone, windowProblem, type OccurrencePlan } from '@metronome/core';

// What the tick and the instant start check before writing for a campaign, so one bad row never fails the shared batch. Pure.

/** A campaign the scheduler cannot turn into a run, with the reason in plain words. */
export class CampaignProblem extends Error {
  constructor(readonly problem: string) {
    super(problem);
  }
}

export function ensure(problem: string | null): void {
  if (problem !== null) throw new CampaignProblem(problem);
}

// The years the ISO form (and the API's contract) covers.
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** Why `at` cannot be stored as a time, or null. */
export function timeProblem(what: string, at: unknown): string | null {
  if (at === null) return null;
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) return `${what} is not a valid time (${String(at)})`;
  if (at.getTime() < EARLIEST || at.getTime() > LATEST) return `${what} ${at.toISOString()} is outside the years 0001 to 9999 that can be stored`;
  return null;
}

/** Why a schedule cannot be evaluated, or null (cron expressions are checked when evaluated). */
export function scheduleProblem(schedule: unknown): string | null {
  if (typeof schedule !== 'object' || schedule === null || Array.isArray(schedule)) return 'its schedule is not an object';
  const s = schedule as Record<string, unknown>;
  switch (s['type']) {
    case 'interval': {
      const every = s['everySeconds'];
      if (typeof every !== 'number' || !Number.isInteger(every) || every < 1)
        return `its schedule's everySeconds (${JSON.stringify(every) ?? 'missing'}) is not a whole number of seconds of at least 1`;
      return null;
    }
    case 'cron':
      return typeof s['expression'] === 'string' && s['expression'].length > 0 ? null : 'its cron schedule has no expression';
    case 'once':
      return null; // the occurrence is next_run_at, checked as the due time
    case undefined:
      return 'its schedule has no type';
    default:
      return `its schedule type ${JSON.stringify(s['type'])} is not interval, cron or once`;
  }
}

/** Why a campaign's message parts cannot make a run, or null. */
export function messagesProblem(messages: unknown): string | null {
  if (!Array.isArray(messages) || messages.length === 0) return 'it has no message parts';
  for (const [i, part] of messages.entries()) {
    const p = (typeof part === 'object' && part !== null ? part : {}) as Record<string, unknown>;
    const ok = (p['type'] === 'text' && typeof p['text'] === 'string') || (p['type'] === 'media' && typeof p['mediaId'] === 'string');
    if (!ok) return `its message part ${i + 1} is neither a text part nor a media part`;
  }
  return null;
}

export function timezoneProblem(timezone: unknown): string | null {
  return typeof timezone === 'string' && isValidTimezone(timezone) ? null : `its timezone ${JSON.stringify(timezone)} is not an IANA zone`;
}

export function deliveryWindowProblem(start: unknown, end: unknown): string | null {
  const problem = typeof start === 'string' && typeof end === 'string' ? windowProblem({ start, end }) : 'it is not two HH:MM times';
  return problem === null ? null : `its delivery window ${JSON.stringify(start)}–${JSON.stringify(end)} is invalid: ${problem}`;
}

/** Why the times a plan would write cannot be stored, or null. */
export function planProblem(plan: OccurrencePlan): string | null {
  if (plan.kind !== 'run') return timeProblem('its next occurrence', plan.next);
  return timeProblem('its occurrence', plan.scheduledAt) ?? timeProblem('its window end', plan.windowEndAt) ?? timeProblem('its next occurrence', plan.next);
}

/** The sentence kept in `campaigns.last_error`, control characters as spaces, long reasons cut. */
export function deactivationReason(problem: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = problem.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  const cut = clean.length > 400 ? `${clean.slice(0, 400)}…` : clean;
  return `The scheduler could not turn this campaign into a run and deactivated it: ${cut}. Correct it, then set active to true.`;
}

/** The problem of an error thrown while evaluating a campaign. */
export function evaluationProblem(error: unknown): string {
  if (error instanceof CampaignProblem) return error.problem;
  const message = error instanceof Error ? error.message : String(error);
  return `evaluating its schedule or delivery window failed (${message})`;
}
