import { DateTime } from 'luxon';

/** "1 chat", "12 chats". */
export function chats(n: number): string {
  return n === 1 ? '1 chat' : `${n} chats`;
}

/** A campaign interval as an adjective: "5-minute", "2-hour", "90-second". */
export function intervalWords(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}-hour`;
  if (seconds % 60 === 0) return `${seconds / 60}-minute`;
  return `${seconds}-second`;
}

/**
 * An instant in the campaign's zone: `HH:mm` on the same local day as `now`, with the date
 * (`17 Jan 06:00`) on another day, so a time never reads as today when it is not.
 */
export function localTime(at: Date, zone: string, now: Date, seconds = false): string {
  const t = DateTime.fromJSDate(at, { zone });
  const clock = t.toFormat(seconds ? 'HH:mm:ss' : 'HH:mm');
  return t.hasSame(DateTime.fromJSDate(now, { zone }), 'day') ? clock : `${t.toFormat('d LLL')} ${clock}`;
}

/** "40/min", or with several parts a chat: "40 sends/min (20 chats/min at 2 parts each)". */
export function paceWords(perMinute: number, partsPerChat: number): string {
  if (partsPerChat <= 1) return `${perMinute}/min`;
  return `${perMinute} sends/min (${round(perMinute / partsPerChat)} chats/min at ${partsPerChat} parts each)`;
}

function round(n: number): string {
  return n >= 10 ? String(Math.floor(n)) : String(Math.floor(n * 10) / 10);
}
