import { DateTime } from 'luxon';
import { cronFields } from './cron-rules.js';
import { isAlwaysOpen, type DeliveryWindow } from './delivery-window.js';
import type { Schedule } from './schedule.js';

// A campaign's schedule in words ("every 5 minutes, 06:00–18:00 Asia/Kuala_Lumpur"). A cron is put in words only when its fields have one plain
// reading, and always keeps its expression beside them.

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MAX_TIMES = 4;

export function scheduleInWords(schedule: Schedule, window: DeliveryWindow, timezone: string): string {
  const opening = isAlwaysOpen(window) ? '' : `${window.start}–${window.end}${crossesMidnight(window) ? ' (overnight)' : ''} `;
  return `${whenInWords(schedule, timezone)}, ${opening}${timezone}`;
}

function whenInWords(s: Schedule, timezone: string): string {
  switch (s.type) {
    case 'interval':
      return s.startAt === undefined ? every(s.everySeconds) : `${every(s.everySeconds)} from ${localDateTime(s.startAt, timezone)}`;
    case 'once':
      return `once at ${localDateTime(s.at, timezone)}`;
    case 'cron': {
      const words = cronInWords(s.expression);
      return words === null ? `on cron ${s.expression.trim()}` : `${words} (cron ${s.expression.trim()})`;
    }
  }
}

export function every(seconds: number): string {
  const unit = (n: number, one: string) => (n === 1 ? `every ${one}` : `every ${n} ${one}s`);
  if (seconds % 86_400 === 0) return unit(seconds / 86_400, 'day');
  if (seconds % 3600 === 0) return unit(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return unit(seconds, 'second');
}

function crossesMidnight(w: DeliveryWindow): boolean {
  return w.end !== '24:00' && w.end < w.start;
}

function localDateTime(iso: string, timezone: string): string {
  const t = DateTime.fromISO(iso, { zone: timezone });
  return t.isValid ? t.toFormat('d LLL yyyy HH:mm') : iso;
}

interface Field {
  any: boolean;
  step: number | null;
  values: number[];
}

function parseField(text: string, min: number, max: number): Field | null {
  if (text === '*') return { any: true, step: null, values: range(min, max, 1) };
  const stepped = /^\*\/(\d+)$/.exec(text);
  if (stepped) {
    const n = Number(stepped[1]);
    return n >= 1 && n <= max ? { any: false, step: n, values: range(min, max, n) } : null;
  }
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?(?:\/(\d+))?$/.exec(part);
    if (!m) return null;
    const from = Number(m[1]);
    const to = m[2] === undefined ? (m[3] === undefined ? from : max) : Number(m[2]);
    const by = m[3] === undefined ? 1 : Number(m[3]);
    if (from < min || to > max || from > to || by < 1) return null;
    for (const v of range(from, to, by)) values.add(v);
  }
  return { any: false, step: null, values: [...values].sort((a, b) => a - b) };
}

function range(from: number, to: number, by: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to; v += by) out.push(v);
  return out;
}

export function cronInWords(expression: string): string | null {
  const fields = cronFields(expression);
  if (!fields) return null;
  const [m, h, dom, mon, dow] = fields as [string, string, string, string, string];
  const minute = parseField(m, 0, 59);
  const hour = parseField(h, 0, 23);
  const day = parseField(dom, 1, 31);
  const month = parseField(mon, 1, 12);
  // 7 is Sunday too
  const weekday = parseField(dow, 0, 7);
  if (!minute || !hour || !day || !month || !weekday) return null;
  const time = timeWords(minute, hour);
  if (time === null) return null;
  const days = dayWords(day, month, weekday);
  if (days === 'every day' && !time.clock) return time.text;
  return `${time.text} ${days}`;
}

function timeWords(minute: Field, hour: Field): { text: string; clock: boolean } | null {
  const two = (n: number) => String(n).padStart(2, '0');
  // a step reads as "every n" only when it divides the hour: */7 fires at :56 and again 4 minutes later at :00
  const minuteStep = minute.step !== null && 60 % minute.step === 0 ? minute.step : null;
  const hourStep = hour.step !== null && 24 % hour.step === 0 ? hour.step : null;
  const oneMinute = minute.values.length === 1 ? `:${two(minute.values[0]!)}` : null;
  if (minute.any && hour.any) return { text: 'every minute', clock: false };
  if (minuteStep !== null && hour.any) return { text: every(minuteStep * 60), clock: false };
  if (oneMinute && hour.any) return { text: `every hour at ${oneMinute}`, clock: false };
  if (oneMinute && hourStep !== null) return { text: `${every(hourStep * 3600)} at ${oneMinute}`, clock: false };
  const times = hour.values.flatMap((hh) => minute.values.map((mm) => `${two(hh)}:${two(mm)}`));
  if (times.length <= MAX_TIMES) return { text: `at ${list(times)}`, clock: true };
  const each = minute.any ? 1 : (minuteStep ?? (oneMinute ? 60 : null));
  if (each !== null && contiguous(hour.values)) return { text: `${every(each * 60)} from ${times[0]} to ${times[times.length - 1]}`, clock: true };
  return null;
}

function dayWords(day: Field, month: Field, weekday: Field): string {
  const weekdays = [...new Set(weekday.values.map((d) => d % 7))].sort((a, b) => a - b);
  const months = spans(month.values, (v) => MONTHS[v - 1]!).join(', ');
  const onDays = weekday.any || weekdays.length === 7 ? '' : `on ${weekdayList(weekdays)}${month.any ? '' : ` in ${months}`}`;
  const onDates = day.any ? '' : `on day${day.values.length > 1 ? 's' : ''} ${spans(day.values, String).join(', ')} of ${month.any ? 'the month' : months}`;
  // Classic cron (and croner): with both day fields restricted, either one matching is enough.
  if (onDays && onDates) return `${onDates} or ${onDays}`;
  if (onDays || onDates) return onDays || onDates;
  return month.any ? 'every day' : `every day in ${months}`;
}

function weekdayList(days: number[]): string {
  const mondayFirst = days.map((d) => (d === 0 ? 7 : d)).sort((a, b) => a - b);
  return spans(mondayFirst, (d) => DAYS[d % 7]!).join(', ');
}

function spans(values: number[], name: (v: number) => string): string[] {
  const out: string[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[j]! + 1) j++;
    if (j - i >= 2) out.push(`${name(values[i]!)}–${name(values[j]!)}`);
    else for (let k = i; k <= j; k++) out.push(name(values[k]!));
    i = j + 1;
  }
  return out;
}

function contiguous(values: number[]): boolean {
  return values.length > 0 && values.every((v, i) => i === 0 || v === values[i - 1]! + 1);
}

function list(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
