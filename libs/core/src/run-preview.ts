import type { DeliveryWindow } from './delivery-window.js';
import { chatsThatFit, runEta } from './run-eta.js';
import type { RunFacts } from './run-facts.js';
import { pacedPerMinute } from './send-pace.js';
import { chats, localTime, paceWords } from './waiting-words.js';

/** A campaign's run as it would go: its chats, parts and account pace, and the opening it starts in. */
export interface RunPlan {
  targets: number;
  partsPerChat: number;
  /** the account's configured sends per minute */
  perMinute: number;
  timezone: string;
  window: DeliveryWindow;
  /** when the run may start; null when the campaign has no occurrence ahead */
  startsAt: Date | null;
  /** when its opening closes; null for a window that never closes */
  windowEndAt: Date | null;
}

export interface RunPreview {
  targets: number;
  /** the sends per minute the sender reserves slots at for the account (send-pace.ts) */
  pacedPerMinute: number;
  /** from the first send to the last, at the account's pace, nothing else holding it */
  durationSeconds: number;
  /** whether the whole run fits before its opening closes */
  fitsWindow: boolean;
  /** one plain sentence */
  detail: string;
}

/**
 * How long a run takes at the account's pace and whether it fits its window: runEta and
 * chatsThatFit applied to a run that has not started (every chat pending, nothing held, the
 * account free), so a preview and a live run's eta never disagree. Times in the sentence are
 * in the campaign's zone, dated when not on `now`'s day.
 */
export function previewRun(p: RunPlan, now: Date): RunPreview {
  const start = p.startsAt ?? new Date(0);
  const facts = (windowEndAt: Date | null): Parameters<typeof runEta>[0] & Pick<RunFacts, 'pending'> => ({
    status: 'queued',
    scheduledAt: start,
    windowEndAt,
    timezone: p.timezone,
    window: p.window,
    partsPerChat: p.partsPerChat,
    account: { id: '', platform: '', status: 'active', blockedUntil: null, perMinute: p.perMinute },
    pending: p.targets,
    inFlight: 0,
    holds: {},
    paceFreeAt: null,
  });
  // With no window end every run "fits": its eta is then simply the last slot.
  const unbounded = runEta({ ...facts(null), window: { start: '00:00', end: '24:00' } }, start);
  const durationSeconds = Math.ceil(((unbounded?.getTime() ?? start.getTime()) - start.getTime()) / 1000);
  const pace = paceWords(p.perMinute, p.partsPerChat);
  const took = `Sending to ${chats(p.targets)}${p.partsPerChat > 1 ? ` (${p.partsPerChat} parts each)` : ''} takes about ${duration(durationSeconds)} at the account's pace of ${pace}`;
  const base = { targets: p.targets, pacedPerMinute: Math.round(pacedPerMinute(p.perMinute) * 100) / 100, durationSeconds };
  if (p.startsAt === null) return { ...base, fitsWindow: false, detail: `${took}; the campaign has no run ahead.` };
  if (p.windowEndAt === null) return { ...base, fitsWindow: true, detail: `${took}; the window never closes.` };
  const fits = runEta(facts(p.windowEndAt), start) !== null;
  // times in the campaign's zone, with the date when not today
  const from = localTime(p.startsAt, p.timezone, now);
  const close = `${localTime(p.windowEndAt, p.timezone, now)} (${p.timezone})`;
  if (fits) return { ...base, fitsWindow: true, detail: `${took}; the first run, from ${from}, ends before the window closes at ${close}.` };
  const fit = chatsThatFit(facts(p.windowEndAt), start);
  return {
    ...base,
    fitsWindow: false,
    detail: `${took}; the first run starts at ${from} and the window closes at ${close}: about ${fit} of the ${chats(p.targets)} fit, then the run pauses with the rest pending.`,
  };
}

/** "45 s", "12 min", "2 h 5 min". */
function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return rest === 0 ? `${Math.floor(minutes / 60)} h` : `${Math.floor(minutes / 60)} h ${rest} min`;
}
