import { newChatHold, type NewChatLimits } from '@metronome/core';
import { z } from 'zod';
import { iso, time } from './common.js';

// What WhatsApp lets an account do with new chats (CONTRACT §3, accounts, "New chats"; libs/core
// new-chat-limits.ts), as the account shows it.
export const newChats = z
  .object({
    held: z
      .object({
        reason: z
          .enum(['new_chats_refused', 'reachout_time_lock', 'new_chat_cap'])
          .describe(
            'new_chats_refused: WhatsApp refused a message to a new chat with 463 (no privacy token), ends by POST /v1/accounts/{id}/cooling/lift; reachout_time_lock: its reach-out time lock; new_chat_cap: its cap on messages to people who have not answered is reached',
          ),
        until: time.nullable().describe('when it ends by itself; null: an operator lifts it'),
        detail: z.string().describe('one plain sentence'),
      })
      .nullable()
      .describe(
        "what holds the account's new chats now (their targets wait, reason new_chat_limit); chats that wrote to it and groups keep going; null: nothing",
      ),
    reachoutLock: z
      .object({ until: time, type: z.string().describe("WhatsApp's enforcement type") })
      .nullable()
      .describe('the reach-out time lock as last told'),
    cap: z
      .object({
        status: z.string().describe('NONE, FIRST_WARNING, SECOND_WARNING or CAPPED'),
        total: z.number().int().nullable(),
        used: z.number().int().nullable(),
        cycleEndsAt: time.nullable(),
        toldAt: time,
      })
      .nullable()
      .describe("WhatsApp's new-chat message cap as last told"),
  })
  .nullable()
  .describe('*(extension)* whatsapp: what WhatsApp lets it do with new one-to-one chats; null: nothing was told')
  .meta({ id: 'NewChats' });

export function newChatsView(l: NewChatLimits | null, now: Date): z.output<typeof newChats> {
  if (!l) return null;
  const hold = newChatHold(l, now);
  return {
    held: hold && { reason: hold.code as 'new_chats_refused', until: hold.until && iso(hold.until), detail: hold.words },
    reachoutLock: l.reachoutLock && { until: iso(l.reachoutLock.until), type: l.reachoutLock.type },
    cap: l.cap && { ...l.cap, cycleEndsAt: l.cap.cycleEndsAt && iso(l.cap.cycleEndsAt), toldAt: iso(l.cap.toldAt) },
  };
}
