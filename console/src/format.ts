// Plain words for times, durations, schedules and counts.
import type { Run } from './api.js';

/** A time in the browser's zone: `14:05:09`, with the date when it is not today. */
export function time(iso: string | null | undefined, now = new Date()): string {
  if (!iso) return '—';
  const d = new Date(iso);
  const sameDay = d.toDateString() === now.toDateString();
  const clock = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  return sameDay ? clock : `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${clock}`;
}

/** A time on `zone`'s clock, `Thu 27 Nov 09:00`: a campaign's runs read in the campaign's zone. */
export function zonedTime(iso: string, zone: string): string {
  try {
    return new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .format(new Date(iso))
      .replace(',', '');
  } catch {
    return time(iso);
  }
}

/** `1 h 5 min`, `3 min 20 s`, `12 s`. */
export function duration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  return `${Math.floor(h / 24)} days`;
}

/** How long after its scheduled time the run started sending; null before it started. */
export function startLag(run: Run): string | null {
  if (!run.startedAt) return null;
  const lag = new Date(run.startedAt).getTime() - new Date(run.scheduledAt).getTime();
  return lag <= 1000 ? 'on time' : `${duration(lag)} late`;
}

/** "in 3 min 20 s" / "2 min ago". */
export function relative(iso: string, now = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  return ms >= 0 ? `in ${duration(ms)}` : `${duration(ms)} ago`;
}

/** "12 of 60 sent". */
export function progress(run: Run): string {
  return `${run.counts.sent} of ${run.counts.total} sent`;
}

export const label = (status: string): string => (status === 'in_flight' ? 'In flight' : status.charAt(0).toUpperCase() + status.slice(1));
