/** A pace reservation: a slot to send at after `waitMs`, or why none was reserved. */
export type PaceReservation =
  | { reserved: true; waitMs: number }
  | { reserved: false; limitedBy: 'account' | 'chat'; waitMs: number }
  | { reserved: false; lockLost: true };

/** A reservation of several slots at once: the wait of each slot reserved (at least one, in order), or why none was. */
export type ManyReservation =
  | { reserved: true; waitsMs: number[] }
  | { reserved: false; limitedBy: 'account'; waitMs: number }
  | { reserved: false; lockLost: true };

/** Per-chat pace of a reservation: sends per minute to one chat; 0 when the platform has none. */
export interface ChatPace {
  chatId: string;
  perMinute: number;
}

/** A reservation of an account with ban-safety limits: as PaceReservation, or a cap met, or a rebuild needed. */
export type SafeReservation = PaceReservation | { reserved: false; limitedBy: 'cap'; waitMs: number } | { reserved: false; rebuild: true };
