import type { Clock } from '@metronome/core';
import type { LateRefusalRepository } from '@metronome/db';
import type { Timers } from '@metronome/transports';
import type { MessageRefusal } from '@metronome/transports/whatsapp';
import type { SenderEvents } from './sender-events.js';

export interface LateRefusalDeps {
  refusals: Pick<LateRefusalRepository, 'refuse'>;
  clock: Clock;
  timers: Timers;
  events: SenderEvents;
  /** how often, and how long apart, a refusal looks again for a target not yet recorded as sent */
  retries?: number;
  retryMs?: number;
}

/** A message WhatsApp refused after the write: its target moves from `sent` to `failed`, or `unknown` when the refusal is ambiguous. */
export function lateRefusalRecorder(d: LateRefusalDeps): (r: MessageRefusal) => void {
  const retries = d.retries ?? 5;
  const retryMs = d.retryMs ?? 2_000;
  const record = async (r: MessageRefusal, attempt: number): Promise<void> => {
    const now = new Date(d.clock.now());
    const status = r.refusal.kind === 'ambiguous' ? 'unknown' : 'failed';
    const moved = await d.refusals.refuse(r.accountId, r.chatId, r.messageId, status, r.refusal.code, 'refused by WhatsApp after it was written', now);
    if (moved.length === 0 && attempt < retries) d.timers.setTimeout(() => void run(r, attempt + 1), retryMs);
    else d.events.emit('send:refused-later', { accountId: r.accountId, chatId: r.chatId, code: r.refusal.code, status, runIds: moved });
  };
  const run = (r: MessageRefusal, attempt: number) =>
    record(r, attempt).catch((error: unknown) =>
      d.events.emit('send:refused-later', { accountId: r.accountId, chatId: r.chatId, code: r.refusal.code, status: 'not-recorded', runIds: [], error }),
    );
  return (r) => void run(r, 0);
}
