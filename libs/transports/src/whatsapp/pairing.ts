import type { WhatsAppFailure } from './classify.js';
import type { SocketRefusal } from './connection.js';
import type { SocketLease } from './socket-lease.js';
import { delay } from './timers.js';

export interface PairingStart {
  qr?: string;
  pairingCode?: string;
  expiresAt: Date;
}

export interface PairingHooks {
  onPaired(): Promise<void>;
  onEnded(reason: { code: string; message: string }): Promise<void>;
}

export interface PairingRequest {
  phoneNumber?: string;
  ttlMs?: number;
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

export function pairingEndCode(failure: WhatsAppFailure): string {
  // Baileys ends a pairing whose QR codes all went unused with a timeout (408).
  if (failure.source === 'connection' && failure.statusCode === 408) return 'pairing_expired';
  return 'connection_closed';
}

export function describeRefusal(refusal: SocketRefusal): string {
  return refusal.reason === 'connect-failed'
    ? refusal.failure.message
    : refusal.reason === 'proxy-failed'
      ? `the account's proxy ${refusal.message}`
      : refusal.reason;
}

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
