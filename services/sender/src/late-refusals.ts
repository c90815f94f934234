import { COOLING_RESTRICTED, coolingWords, type Clock, type CoolingSettings } from '@metronome/core';
import type { AccountCoolingRepository, LateRefusalRepository } from '@metronome/db';
import type { Timers } from '@metronome/transports';
import type { MessageRefusal } from '@metronome/transports/whatsapp';
import type { SenderEvents } from './sender-events.js';

export interface LateRefusalDeps {
  cooling: Pick<AccountCoolingRepository, 'restrict'>;
  settings: CoolingSettings;
  refusals: Pick<LateRefusalRepository, 'refuse'>;
  clock: Clock;
  timers: Timers;
  events: SenderEvents;
  /** how often, and how long apart, a refusal looks again for a target not yet recorded as sent */
  retries?: number;
  retryMs?: number;
}

/**
 * What the sender does with a message WhatsApp refused after the write (the transport's
 * MessageRefusal): a 463 restricts the account (cooling, `restricted`, until an operator lifts
 * it: its runs wait, the `account` event and webhook tell it, the metric's alert fires); the
 * target moves from `sent` to `failed`, or `unknown` when the refusal is ambiguous. A refusal
 * may come before the lane has written the target as sent: it looks again a few times.
 */
export function lateRefusalRecorder(d: LateRefusalDeps): (r: MessageRefusal) => void {
  const retries = d.retries ?? 5;
  const retryMs = d.retryMs ?? 2_000;
  const record = async (r: MessageRefusal, attempt: number): Promise<void> => {
    const now = new Date(d.clock.now());
    if (attempt === 0 && r.refusal.kind === 'account-restricted' && (await d.cooling.restrict(r.accountId, now))) {
      d.events.emit('account:cooling', {
        accountId: r.accountId,
        platform: 'whatsapp',
        reason: COOLING_RESTRICTED,
        until: 0,
        paceFactor: 1,
        words: coolingWords(COOLING_RESTRICTED, d.settings),
      });
    }
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
