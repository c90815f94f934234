import type { ChatDirectorySink, DirectorySyncState } from '@metronome/core';
import type { BotApiAnswer, BotApiClient, BotApiFailure, BotApiOversized } from './bot-api-client.js';
import { chatsFromUpdates } from './chat-updates.js';

/** Exact words: the console shows them. */
export const WEBHOOK_REASON = 'the bot has its own webhook; Metronome does not read its updates';

type Answer = BotApiAnswer | BotApiFailure | BotApiOversized;

/**
 * A bot's chats from the updates Telegram holds for it (bots cannot list chats). A bot with a webhook is `unsupported`
 * (getUpdates would 409). getUpdates has no `offset` and no `allowed_updates`, so nothing is confirmed (deleted) or changed
 * for the owner's poller; the price is seeing only the 100 oldest pending updates. Chats are upserted, never a full listing.
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

function refusal(answer: Answer, now: () => number): DirectorySyncState | null {
  if ('failure' in answer) return { status: 'failed', reason: `Telegram did not answer: ${answer.message}` };
  if ('oversized' in answer) return { status: 'failed', reason: 'Telegram answered with more than 64 KiB' };
  const body = answer.body;
  if (answer.status >= 200 && answer.status < 300 && body?.['ok'] === true) return null;
  const description = typeof body?.['description'] === 'string' ? body['description'] : `HTTP ${answer.status}`;
  // 409: a webhook set since getWebhookInfo answered, or another poller's request won.
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
