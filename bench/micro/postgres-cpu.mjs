import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds used so far by every PostgreSQL process (their /proc stat, in clock ticks of 1/100 s). */
export function postgresCpu() {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres')) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(')')[1].trim().split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks / 100;
}
