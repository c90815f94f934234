import type { ChatDirectorySink, DirectorySyncState } from '@metronome/core';
import type { BotApiAnswer, BotApiClient, BotApiFailure, BotApiOversized } from './bot-api-client.js';
import { chatsFromUpdates } from './chat-updates.js';

/** What the directory says of a bot that has its own webhook (exact words: the console shows them). */
export const WEBHOOK_REASON = 'the bot has its own webhook; Metronome does not read its updates';

type Answer = BotApiAnswer | BotApiFailure | BotApiOversized;

/**
 * A bot's chats into its directory, from the updates Telegram holds for it (bots cannot list
 * their chats). In order:
 * 1. `getWebhookInfo`: a webhook set means its updates go to the bot owner's server, and
 *    getUpdates would be refused (409) — the directory says `unsupported`, getUpdates is never called.
 * 2. `getUpdates` with no `offset`: the updates are read, never confirmed. Confirming them (an
 *    offset past them) would delete them for the owner's own poller, and the Bot API keeps an
 *    update until it is confirmed or 24 hours pass. The price: each sync sees the (up to 100)
 *    oldest pending updates, not later ones, and a bot nobody polls loses its updates after 24 h.
 *    No `allowed_updates` either: it is a setting of the bot that getUpdates keeps, so passing
 *    it would change which updates the owner's poller gets; the default set already has
 *    `message`, `channel_post` and `my_chat_member`, and other kinds are skipped here.
 * 3. The chats those updates show are upserted (never a complete listing), and the state says
 *    how many this sync saw.
 */
export async function syncBotDirectory(client: BotApiClient, token: string, accountId: string, sink: ChatDirectorySink, now: () => number): Promise<void> {
  const report = (state: DirectorySyncState) => sink.syncState(accountId, state, new Date(now()));

  const info = await client.call(token, 'getWebhookInfo', json({}));
  const refused = refusal(info, now);
  if (refused) return report(refused);
  const webhook = resultOf(info as BotApiAnswer);
  if (typeof webhook?.['url'] === 'string' && webhook['url'] !== '') return report({ status: 'unsupported', reason: WEBHOOK_REASON });

  await report({ status: 'syncing', synced: 0 });
  // An answer is read up to 64 KiB: fewer updates at a time until it fits.
  let answer: Answer | null = null;
  for (let limit = 100; limit >= 1; limit = Math.floor(limit / 2)) {
    answer = await client.call(token, 'getUpdates', json({ limit, timeout: 0 }));
    if (!('oversized' in answer)) break;
  }
  const notRead = refusal(answer!, now);
  if (notRead) return report(notRead);
  const updates = (answer as BotApiAnswer).body?.['result'];
  const chats = chatsFromUpdates(Array.isArray(updates) ? updates : []);
  if (chats.length > 0) await sink.upsert(accountId, chats, new Date(now()));
  return report({ status: 'ok', size: chats.length });
}

/** The state an unsuccessful answer means, or null when it is a success. */
function refusal(answer: Answer, now: () => number): DirectorySyncState | null {
  if ('failure' in answer) return { status: 'failed', reason: `Telegram did not answer: ${answer.message}` };
  if ('oversized' in answer) return { status: 'failed', reason: 'Telegram answered with more than 64 KiB' };
  const body = answer.body;
  if (answer.status >= 200 && answer.status < 300 && body?.['ok'] === true) return null;
  const description = typeof body?.['description'] === 'string' ? body['description'] : `HTTP ${answer.status}`;
  // 409 to getUpdates: a webhook set since getWebhookInfo answered, or another poller's request won.
  if (answer.status === 409) return { status: 'failed', reason: `Telegram refused getUpdates (${description}): sync again` };
  if (answer.status === 401 || answer.status === 404) return { status: 'failed', reason: `the bot token was refused (${description})` };
  if (answer.status === 429) {
    const retryAfter = Number((body?.['parameters'] as Record<string, unknown> | undefined)?.['retry_after']);
    const waitMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 5_000;
    return { status: 'backing_off', until: new Date(now() + waitMs), reason: `Telegram asked to slow down (${description})` };
  }
  return { status: 'failed', reason: `Telegram refused: ${description}` };
}

function resultOf(answer: BotApiAnswer): Record<string, unknown> | null {
  const result = answer.body?.['result'];
  return result && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : null;
}

function json(value: Record<string, unknown>): { contentType: string; bytes: Buffer } {
  return { contentType: 'application/json', bytes: Buffer.from(JSON.stringify(value)) };
}
