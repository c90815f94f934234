import type { ManyReservation, PaceReservation, SafeReservation } from './pace-types.js';
import { scriptReplies } from './script-replies.js';

// The pace scripts' replies, apart from pace.ts and safe-pace.ts so both can read them; the
// reservation types they build live in pace-types.ts.

/** How both pace reservations (pace-reserve-3, pace-reserve-safe-6) read the codes they share. */
export const paceReservationCases = {
  OK: (waitMs: number): PaceReservation => ({ reserved: true, waitMs }),
  ACCOUNT_WAIT: (waitMs: number): PaceReservation => ({ reserved: false, limitedBy: 'account', waitMs }),
  CHAT_WAIT: (waitMs: number): PaceReservation => ({ reserved: false, limitedBy: 'chat', waitMs }),
  NOT_HOLDER: (): PaceReservation => ({ reserved: false, lockLost: true }),
};
export const paceReserveReplies = scriptReplies('pace-reserve-3', paceReservationCases);
/** pace-reserve-many-3: the waits of the slots reserved (at least one), or why none was */
export const paceReserveManyReplies = scriptReplies<ManyReservation>('pace-reserve-many-3', {
  OK: (first, more) => ({ reserved: true, waitsMs: [first, ...more] }),
  ACCOUNT_WAIT: (waitMs) => ({ reserved: false, limitedBy: 'account', waitMs }),
  NOT_HOLDER: () => ({ reserved: false, lockLost: true }),
  // not answered: the script asks no chat pace (the code is the shared GCRA's); read as a wait all the same
  CHAT_WAIT: (waitMs) => ({ reserved: false, limitedBy: 'account', waitMs }),
});
/** pace-reserve-safe-6: a pace reservation, or a cap met, or a rebuild needed */
export const safeReserveReplies = scriptReplies<SafeReservation>('pace-reserve-safe-6', {
  ...paceReservationCases,
  CAP_MET: (waitMs) => ({ reserved: false, limitedBy: 'cap', waitMs }),
  REBUILD: () => ({ reserved: false, rebuild: true }),
});
/** pace-seed-3: true when the sends are seeded (now or before); false when the lock is not held */
export const paceSeedReplies = scriptReplies('pace-seed-3', { OK: () => true, UNCHANGED: () => true, NOT_HOLDER: () => false });
