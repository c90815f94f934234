import type { WhatsAppFailure } from './classify.js';
import type { SocketRefusal } from './connection.js';
import type { SocketLease } from './socket-lease.js';
import { delay } from './timers.js';

/** What a pairing hands to the operator. */
export interface PairingStart {
  /** the QR payload to show (when no phone number was given) */
  qr?: string;
  /** the code to type on the phone (when a phone number was given) */
  pairingCode?: string;
  expiresAt: Date;
}

export interface PairingHooks {
  /** the phone accepted the device and the connection opened with the new credentials (saved) */
  onPaired(): Promise<void>;
  /** the pairing ended without success (expired, refused, connection lost, shut down) */
  onEnded(reason: { code: string; message: string }): Promise<void>;
}

export interface PairingRequest {
  /** E.164 digits: pair by code instead of QR */
  phoneNumber?: string;
  /** how long the QR or code is offered, ms */
  ttlMs?: number;
  /** how long to wait for another replica to hand the account's socket over, ms */
  handoverWaitMs?: number;
}

/** Coded errors of `pair` (the API maps them; never matched by message). */
export class PairingError extends Error {
  constructor(
    readonly code: 'busy' | 'unreachable' | 'closed',
    message: string,
  ) {
    super(message);
    this.name = 'PairingError';
  }
}

/** The end code of a pairing whose connection closed. */
export function pairingEndCode(failure: WhatsAppFailure): string {
  // Baileys ends a pairing whose QR codes all went unused with a timeout (408).
  if (failure.source === 'connection' && failure.statusCode === 408) return 'pairing_expired';
  return 'connection_closed';
}

/** Why a socket could not be had, in words. */
export function describeRefusal(refusal: SocketRefusal): string {
  return refusal.reason === 'connect-failed'
    ? refusal.failure.message
    : refusal.reason === 'proxy-failed'
      ? `the account's proxy ${refusal.message}`
      : refusal.reason;
}

/** Takes the account's socket lease for a pairing, asking the holder to hand over and waiting up to `waitMs`. */
export async function takeLeaseForPairing(
  lease: SocketLease,
  accountId: string,
  holderId: string,
  ttlMs: number,
  waitMs: number,
  renewEveryMs: number,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if ((await lease.acquire(accountId, holderId, ttlMs)) !== 'busy') return;
    if (Date.now() >= deadline) throw new PairingError('busy', 'another replica holds the account connection and did not hand it over in time');
    const pause = delay(Math.min(250, Math.max(10, renewEveryMs / 4)));
    await pause.promise;
  }
}
