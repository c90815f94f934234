// A campaign's times are typed as wall-clock times in the campaign's timezone (what a
// datetime-local input gives: `2026-11-26T09:30`), and sent as UTC instants. The browser's Intl
// knows every IANA zone; an unknown zone is read as UTC here (the API names `timezone` anyway).

function parts(ms: number, zone: string): Record<string, number> {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const out: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(ms))) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return out;
}

/** How far `zone`'s wall clock is ahead of UTC at the instant `ms`. */
function offsetMs(ms: number, zone: string): number {
  const p = parts(ms, zone);
  const wall = Date.UTC(p['year']!, p['month']! - 1, p['day']!, p['hour']!, p['minute']!, p['second']!);
  return wall - Math.floor(ms / 1000) * 1000;
}

function knownZone(zone: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return 'UTC';
  }
}

/** `2026-11-26T09:30` in `zone` → an ISO instant; text that is not such a time is returned as is (the API names it). */
export function zonedToUtc(local: string, zone: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local);
  if (!m) return local;
  const z = knownZone(zone);
  const wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  // Two passes: the offset at the guess, then at the corrected instant (daylight-saving edges).
  let ms = wall - offsetMs(wall, z);
  ms = wall - offsetMs(ms, z);
  return new Date(ms).toISOString();
}

/** An ISO instant as `zone`'s wall clock, for a datetime-local input. */
export function utcToZoned(iso: string, zone: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return '';
  const p = parts(ms, knownZone(zone));
  const two = (n: number | undefined) => String(n ?? 0).padStart(2, '0');
  return `${String(p['year']).padStart(4, '0')}-${two(p['month'])}-${two(p['day'])}T${two(p['hour'])}:${two(p['minute'])}`;
}
