import type { RunFacts } from './run-facts.js';

// One run's facts for the table-driven tests of what a run waits for and when it ends, against
// one fixed `now`: 11:00 in Kuala Lumpur (UTC+8), inside a 06:00–18:00 window that closes at
// 10:00 UTC. (Test-only: excluded from the build.)

export const NOW = new Date('2030-01-16T03:00:00Z');
export const at = (iso: string) => new Date(`2030-01-16T${iso}Z`);

export const BASE_FACTS: RunFacts = {
  status: 'running',
  pausedReason: null,
  scheduledAt: at('02:00:00'),
  firstSendAt: at('02:00:00'),
  windowEndAt: at('10:00:00'),
  timezone: 'Asia/Kuala_Lumpur',
  window: { start: '06:00', end: '18:00' },
  autoResume: false,
  everySeconds: 300,
  partsPerChat: 1,
  account: { id: 'acc-1', platform: 'http', status: 'active', blockedUntil: null, perMinute: 40 },
  total: 12,
  skipped: 0,
  pending: 12,
  inFlight: 0,
  due: 12,
  dueSince: null,
  holds: {},
  paceFreeAt: null,
  accountBusy: false,
};

export type FactsPatch = Omit<Partial<RunFacts>, 'account'> & { account?: Partial<RunFacts['account']> };

/** `factsFrom(base)(patch)`: the facts with `patch` over `base` over BASE_FACTS, the account merged field by field. */
export function factsFrom(base: FactsPatch = {}): (p?: FactsPatch) => RunFacts {
  const b: RunFacts = { ...BASE_FACTS, ...base, account: { ...BASE_FACTS.account, ...base.account } };
  return (p = {}) => ({ ...b, ...p, account: { ...b.account, ...p.account } });
}
