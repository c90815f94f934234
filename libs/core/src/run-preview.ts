import type { DeliveryWindow } from './delivery-window.js';
import { chatsThatFit, runEta } from './run-eta.js';
import type { RunFacts } from './run-facts.js';
import { pacedPerMinute } from './send-pace.js';
import { chats, localTime, paceWords } from './waiting-words.js';

export interface RunPlan {
  targets: number;
  partsPerChat: number;
  perMinute: number;
  timezone: string;
  window: DeliveryWindow;
  /** null: the campaign has no occurrence ahead */
  startsAt: Date | null;
  windowEndAt: Date | null;
}

export interface RunPreview {
  targets: number;
  /** the rate the sender reserves slots at (send-pace.ts) */
  pacedPerMinute: number;
  durationSeconds: number;
  fitsWindow: boolean;
  detail: string;
}

/** How long a run takes at the account's pace and whether it fits its window: runEta on a run not yet started, so preview and live eta agree. */
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
  const unbounded = runEta({ ...facts(null), window: { start: '00:00', end: '24:00' } }, start);
  const durationSeconds = Math.ceil(((unbounded?.getTime() ?? start.getTime()) - start.getTime()) / 1000);
  const pace = paceWords(p.perMinute, p.partsPerChat);
  const took = `Sending to ${chats(p.targets)}${p.partsPerChat > 1 ? ` (${p.partsPerChat} parts each)` : ''} takes about ${duration(durationSeconds)} at the account's pace of ${pace}`;
  const base = { targets: p.targets, pacedPerMinute: Math.round(pacedPerMinute(p.perMinute) * 100) / 100, durationSeconds };
  if (p.startsAt === null) return { ...base, fitsWindow: false, detail: `${took}; the campaign has no run ahead.` };
  if (p.windowEndAt === null) return { ...base, fitsWindow: true, detail: `${took}; the window never closes.` };
  const fits = runEta(facts(p.windowEndAt), start) !== null;
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

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return rest === 0 ? `${Math.floor(minutes / 60)} h` : `${Math.floor(minutes / 60)} h ${rest} min`;
}
