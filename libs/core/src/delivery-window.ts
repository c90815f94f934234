import { DateTime, IANAZone } from 'luxon';

/** A daily delivery window in a campaign's timezone: `HH:MM` start and end (end may be `24:00`). */
export interface DeliveryWindow {
  start: string;
  end: string;
}

export const ALWAYS_OPEN: DeliveryWindow = { start: '00:00', end: '24:00' };

/** One concrete opening of a window. `end` is exclusive: nothing is sent at or after it. */
export interface WindowSpan {
  start: Date;
  end: Date;
}

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$|^24:00$/;

export function isTimeOfDay(value: string): boolean {
  return HHMM.test(value);
}

/** Zone names found valid: luxon's check builds an `Intl.DateTimeFormat` per call, and the valid names are a small finite set. */
const validZones = new Set<string>();

export function isValidTimezone(zone: string): boolean {
  if (typeof zone !== 'string' || zone.length === 0) return false;
  if (validZones.has(zone)) return true;
  if (!IANAZone.isValidZone(zone)) return false;
  validZones.add(zone);
  return true;
}

export function windowProblem(window: DeliveryWindow): string | null {
  if (!isTimeOfDay(window.start) || window.start === '24:00') return 'start must be HH:MM from 00:00 to 23:59';
  if (!isTimeOfDay(window.end)) return 'end must be HH:MM from 00:00 to 24:00';
  if (window.start === window.end) return 'start and end must differ';
  return null;
}

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

/** The instant local `minutes` happens on `day` in `zone`: in a spring-forward gap, the gap's end (luxon would shift it by the gap); repeated, the first. */
export function localTimeToInstant(day: { year: number; month: number; day: number }, minutes: number, zone: string): number {
  const tz = IANAZone.create(zone);
  const naive = Date.UTC(day.year, day.month - 1, day.day, 0, minutes); // wall time read as UTC
  const offsets = [...new Set([tz.offset(naive - 86_400_000), tz.offset(naive), tz.offset(naive + 86_400_000)])];
  const exact = offsets
    .map((offset) => naive - offset * 60_000)
    .filter((instant) => tz.offset(instant) * 60_000 === naive - instant)
    .sort((a, b) => a - b);
  if (exact[0] !== undefined) return exact[0];
  let lo = naive - Math.max(...offsets) * 60_000;
  let hi = naive - Math.min(...offsets) * 60_000;
  const before = tz.offset(lo);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (tz.offset(mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The opening of `window` that contains `at`, else the next one; `end <= start` crosses midnight. */
export function windowAt(at: Date, window: DeliveryWindow, zone: string): WindowSpan {
  const t = at.getTime();
  const startMin = minutesOf(window.start);
  const endMin = minutesOf(window.end);
  const crosses = endMin <= startMin;
  const today = DateTime.fromMillis(t, { zone }).startOf('day');
  for (let offset = -1; offset <= 2; offset++) {
    const day = today.plus({ days: offset });
    const next = day.plus({ days: 1 });
    const start = localTimeToInstant(day, startMin, zone);
    const end = localTimeToInstant(crosses ? next : day, endMin, zone);
    if (end > start && end > t) return { start: new Date(start), end: new Date(end) };
  }
  // unreachable for a valid window; fail loudly rather than send outside one
  throw new Error(`no delivery window found for ${at.toISOString()} in ${zone}`);
}

export function isWindowOpen(at: Date, window: DeliveryWindow, zone: string): boolean {
  return windowAt(at, window, zone).start.getTime() <= at.getTime();
}

export function isAlwaysOpen(window: DeliveryWindow): boolean {
  return window.start === '00:00' && window.end === '24:00';
}

/** When a run due at `dueAt` may start (never earlier) and when its window closes (null: never). */
export function placeInWindow(dueAt: Date, window: DeliveryWindow, zone: string): { startAt: Date; windowEndAt: Date | null } {
  if (isAlwaysOpen(window)) return { startAt: dueAt, windowEndAt: null };
  const span = windowAt(dueAt, window, zone);
  const startAt = span.start.getTime() > dueAt.getTime() ? span.start : dueAt;
  return { startAt, windowEndAt: span.end };
}

export function formatLocalTime(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toFormat('HH:mm');
}
