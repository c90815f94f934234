import type { ManyReservation, PaceReservation, SafeReservation } from './pace-types.js';
import { scriptReplies } from './script-replies.js';

export const paceReservationCases = {
  OK: (waitMs: number): PaceReservation => ({ reserved: true, waitMs }),
  ACCOUNT_WAIT: (waitMs: number): PaceReservation => ({ reserved: false, limitedBy: 'account', waitMs }),
  CHAT_WAIT: (waitMs: number): PaceReservation => ({ reserved: false, limitedBy: 'chat', waitMs }),
  NOT_HOLDER: (): PaceReservation => ({ reserved: false, lockLost: true }),
};
export const paceReserveReplies = scriptReplies('pace-reserve-3', paceReservationCases);
export const paceReserveManyReplies = scriptReplies<ManyReservation>('pace-reserve-many-3', {
  OK: (first, more) => ({ reserved: true, waitsMs: [first, ...more] }),
  ACCOUNT_WAIT: (waitMs) => ({ reserved: false, limitedBy: 'account', waitMs }),
  NOT_HOLDER: () => ({ reserved: false, lockLost: true }),
  // not answered: the script asks no chat pace (the code is the shared GCRA's); read as a wait all the same
  CHAT_WAIT: (waitMs) => ({ reserved: false, limitedBy: 'account', waitMs }),
});
export const safeReserveReplies = scriptReplies<SafeReservation>('pace-reserve-safe-6', {
  ...paceReservationCases,
  CAP_MET: (waitMs) => ({ reserved: false, limitedBy: 'cap', waitMs }),
  REBUILD: () => ({ reserved: false, rebuild: true }),
});
export const paceSeedReplies = scriptReplies('pace-seed-3', { OK: () => true, UNCHANGED: () => true, NOT_HOLDER: () => false });
