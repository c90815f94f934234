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

/** True for a valid `HH:MM` (00:00–23:59, or 24:00). */
export function isTimeOfDay(value: string): boolean {
  return HHMM.test(value);
}

/**
 * Zone names found valid. Luxon's check builds an `Intl.DateTimeFormat` every call, which was the
 * scheduler's largest cost per due campaign; the valid names are a finite set (a few hundred),
 * so only they are kept, and a name that is not valid is checked again each time.
 */
const validZones = new Set<string>();

/** True for an IANA zone name luxon (and so Intl) knows. */
export function isValidTimezone(zone: string): boolean {
  if (typeof zone !== 'string' || zone.length === 0) return false;
  if (validZones.has(zone)) return true;
  if (!IANAZone.isValidZone(zone)) return false;
  validZones.add(zone);
  return true;
}

/** Why a window is not acceptable, or null when it is. */
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

/**
 * The instant at which the local wall-clock time `minutes` (after midnight) happens on the
 * local calendar day `day` in `zone`. A time that does not exist that day (spring-forward gap)
 * resolves to the first instant after the gap (02:30 → 03:00 when clocks jump 02:00 → 03:00);
 * a time that happens twice (fall-back) resolves to its first occurrence. 1440 (`24:00`) is the
 * next day's 00:00. Written by hand because luxon moves a nonexistent time forward by the gap
 * length (02:30 → 03:30), which would open a window later than the operator asked.
 */
export function localTimeToInstant(day: { year: number; month: number; day: number }, minutes: number, zone: string): number {
  const tz = IANAZone.create(zone);
  const naive = Date.UTC(day.year, day.month - 1, day.day, 0, minutes); // wall time read as UTC
  const offsets = [...new Set([tz.offset(naive - 86_400_000), tz.offset(naive), tz.offset(naive + 86_400_000)])];
  const exact = offsets
    .map((offset) => naive - offset * 60_000)
    .filter((instant) => tz.offset(instant) * 60_000 === naive - instant)
    .sort((a, b) => a - b);
  if (exact[0] !== undefined) return exact[0];
  // In a gap: the transition lies between the instants the two offsets give; find it.
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

/**
 * The opening of `window` that contains `at`, or — when `at` is outside every opening — the
 * next one. Windows with `end <= start` cross midnight (22:00–06:00 opens at 22:00 and closes
 * at 06:00 the next day).
 */
export function windowAt(at: Date, window: DeliveryWindow, zone: string): WindowSpan {
  const t = at.getTime();
  const startMin = minutesOf(window.start);
  const endMin = minutesOf(window.end);
  const crosses = endMin <= startMin;
  const today = DateTime.fromMillis(t, { zone }).startOf('day');
  // Openings are in day order, so the first one that has not ended is the answer.
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

/** True when `at` is inside an opening of the window. */
export function isWindowOpen(at: Date, window: DeliveryWindow, zone: string): boolean {
  return windowAt(at, window, zone).start.getTime() <= at.getTime();
}

/** True for the 00:00–24:00 window, which never closes. */
export function isAlwaysOpen(window: DeliveryWindow): boolean {
  return window.start === '00:00' && window.end === '24:00';
}

/**
 * When a run due at `dueAt` may start and when its window closes: `dueAt` itself inside an
 * opening, else the next opening's start — never earlier than `dueAt`. `windowEndAt` is null
 * for a window that never closes.
 */
export function placeInWindow(dueAt: Date, window: DeliveryWindow, zone: string): { startAt: Date; windowEndAt: Date | null } {
  if (isAlwaysOpen(window)) return { startAt: dueAt, windowEndAt: null };
  const span = windowAt(dueAt, window, zone);
  const startAt = span.start.getTime() > dueAt.getTime() ? span.start : dueAt;
  return { startAt, windowEndAt: span.end };
}

/** `HH:mm` of an instant in a zone, for messages such as "Delivery window closed at 18:00". */
export function formatLocalTime(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toFormat('HH:mm');
}
