export type PaceReservation =
  | { reserved: true; waitMs: number }
  | { reserved: false; limitedBy: 'account' | 'chat'; waitMs: number }
  | { reserved: false; lockLost: true };

export type ManyReservation =
  | { reserved: true; waitsMs: number[] }
  | { reserved: false; limitedBy: 'account'; waitMs: number }
  | { reserved: false; lockLost: true };

export interface ChatPace {
  chatId: string;
  perMinute: number;
}

export type SafeReservation = PaceReservation | { reserved: false; limitedBy: 'cap'; waitMs: number } | { reserved: false; rebuild: true };
