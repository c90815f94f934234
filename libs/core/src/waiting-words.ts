export function chats(n: number): string {
  return n === 1 ? '1 chat' : `${n} chats`;
}

export function intervalWords(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}-hour`;
  if (seconds % 60 === 0) return `${seconds / 60}-minute`;
  return `${seconds}-second`;
}

/**
 * An instant in the campaign's zone: `HH:mm` on `now`'s local day, dated (`17 Jan 06:00`) on another, so a time never reads as today when it is not.
 * One cached `Intl.DateTimeFormat` per zone: luxon's `toFormat` builds its formatters each call.
 */
export function localTime(at: Date, zone: string, now: Date, seconds = false): string {
  const t = partsIn(zone, at);
  const clock = seconds ? `${t.hour}:${t.minute}:${t.second}` : `${t.hour}:${t.minute}`;
  const today = todayIn(zone, now);
  const sameDay = t.year === today.year && t.month === today.month && t.day === today.day;
  return sameDay ? clock : `${Number(t.day)} ${t.monthName} ${clock}`;
}

interface LocalParts {
  year: string;
  month: string;
  monthName: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function partsIn(zone: string, at: Date): LocalParts {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(zone, format);
  }
  const parts: Record<string, string> = {};
  for (const p of format.formatToParts(at)) parts[p.type] = p.value;
  const month = parts['month'] ?? '01';
  return {
    year: parts['year'] ?? '',
    month,
    monthName: MONTHS[Number(month) - 1] ?? month,
    day: parts['day'] ?? '',
    hour: parts['hour'] ?? '',
    minute: parts['minute'] ?? '',
    second: parts['second'] ?? '',
  };
}

/** Kept for the next call: a page's runs are all explained against one `now`. */
let lastToday: { zone: string; at: number; parts: LocalParts } | null = null;
function todayIn(zone: string, now: Date): LocalParts {
  if (lastToday?.zone !== zone || lastToday.at !== now.getTime()) lastToday = { zone, at: now.getTime(), parts: partsIn(zone, now) };
  return lastToday.parts;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export function paceWords(perMinute: number, partsPerChat: number): string {
  if (partsPerChat <= 1) return `${perMinute}/min`;
  return `${perMinute} sends/min (${round(perMinute / partsPerChat)} chats/min at ${partsPerChat} parts each)`;
}

function round(n: number): string {
  return n >= 10 ? String(Math.floor(n)) : String(Math.floor(n * 10) / 10);
}
