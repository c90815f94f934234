import type { Connection } from './connection.js';
import type { PairingHooks } from './pairing.js';
import type { WhatsAppLogger } from './socket.js';

export interface PairingState {
  hooks: PairingHooks;
  timer: NodeJS.Timeout | null;
  ended: boolean;
  started: boolean;
}

/** The phone accepted: success is recorded, then the pairing socket closes (a sender opens its own). */
export async function pairedEnd(
  state: PairingState | undefined,
  conn: Connection,
  logger: WhatsAppLogger,
  dispose: (why: string) => Promise<void>,
): Promise<void> {
  if (!state || state.ended) return;
  state.ended = true;
  if (state.timer) clearTimeout(state.timer);
  try {
    await conn.auth.flush();
    await state.hooks.onPaired();
  } catch (err) {
    logger.error({ err, accountId: conn.accountId }, 'whatsapp pairing: could not record success');
  }
  await dispose('paired');
}

export async function pairingEnd(
  state: PairingState | undefined,
  conn: Connection,
  reason: { code: string; message: string },
  logger: WhatsAppLogger,
  dispose: (why: string) => Promise<void>,
): Promise<void> {
  if (state && !state.ended) {
    state.ended = true;
    await state.hooks.onEnded(reason).catch((err: unknown) => logger.error({ err, accountId: conn.accountId }, 'whatsapp pairing: could not record its end'));
  }
  await dispose(reason.code);
}
