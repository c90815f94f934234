/**
 * The FAKE Bot API's updates and webhooks (fake-telegram-bot-api.ts), as the Bot API documents
 * them (https://core.telegram.org/bots/api#getting-updates):
 * - `getWebhookInfo` → `{url, has_custom_certificate, pending_update_count, allowed_updates?}`,
 *   `url` empty when no webhook is set;
 * - `getUpdates` while a webhook is set → 409 Conflict;
 * - `getUpdates` returns the pending updates from the earliest unconfirmed one, up to `limit`
 *   (1–100, default 100); an `offset` confirms (deletes) every update below it, a negative one
 *   keeps only the last -offset; updates are kept 24 hours at most;
 * - `allowed_updates` given to getUpdates becomes the bot's setting, kept for later calls (not
 *   given: the previous setting); it filters updates as they are created. The default: every
 *   type but `chat_member`, `message_reaction` and `message_reaction_count`.
 * No long polling: `timeout` is accepted and the call answers at once.
 */

const NOT_BY_DEFAULT = new Set(['chat_member', 'message_reaction', 'message_reaction_count']);
const DAY_MS = 24 * 3_600_000;

interface BotUpdates {
  webhookUrl: string;
  allowed: string[] | null;
  pending: { update: Record<string, unknown>; at: number }[];
  nextId: number;
}

type Answer = { status: 200; result: unknown } | { status: number; description: string };

export class FakeTelegramUpdates {
  private readonly bots = new Map<string, BotUpdates>();
  /** every getUpdates call, with its parameters as sent */
  readonly getUpdatesCalls: { botId: string; params: Record<string, unknown> }[] = [];

  constructor(private readonly now: () => number) {}

  /** The bot owner set a webhook (`setWebhook`): its updates go there; '' removes it. */
  setWebhook(botId: string, url: string): void {
    this.of(botId).webhookUrl = url;
  }

  /**
   * Something happened that the bot hears of: one update of `type` (`message`, `channel_post`,
   * `my_chat_member`…) is queued with the next update_id, unless the bot's setting filters it.
   */
  push(botId: string, type: string, payload: Record<string, unknown>): void {
    const bot = this.of(botId);
    if (bot.allowed ? !bot.allowed.includes(type) : NOT_BY_DEFAULT.has(type)) return;
    bot.pending.push({ update: { update_id: bot.nextId++, [type]: payload }, at: this.now() });
  }

  /** The bot's updates still pending (unconfirmed and younger than 24 hours). */
  pending(botId: string): Record<string, unknown>[] {
    return this.fresh(this.of(botId)).map((p) => p.update);
  }

  /** The bot's allowed_updates setting (null: never set, the default). */
  allowedUpdates(botId: string): string[] | null {
    return this.of(botId).allowed;
  }

  /** The answer to one of the methods this module serves, or null for any other method. */
  answer(botId: string, method: string, fields: Map<string, { value: string }>): Answer | null {
    const bot = this.of(botId);
    if (method === 'getWebhookInfo') {
      const info = { url: bot.webhookUrl, has_custom_certificate: false, pending_update_count: this.fresh(bot).length };
      return { status: 200, result: bot.allowed ? { ...info, allowed_updates: bot.allowed } : info };
    }
    if (method !== 'getUpdates') return null;
    const params: Record<string, unknown> = {};
    for (const [k, f] of fields) params[k] = parse(f.value);
    this.getUpdatesCalls.push({ botId, params });
    if (bot.webhookUrl)
      return { status: 409, description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first" };
    const limit = params['limit'] === undefined ? 100 : Number(params['limit']);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return { status: 400, description: 'Bad Request: wrong limit specified' };
    if (params['allowed_updates'] !== undefined) {
      const list = params['allowed_updates'];
      if (!Array.isArray(list)) return { status: 400, description: 'Bad Request: allowed_updates must be an array' };
      bot.allowed = list.length === 0 ? null : list.map(String);
    }
    bot.pending = this.fresh(bot);
    const offset = params['offset'] === undefined ? null : Number(params['offset']);
    if (offset !== null && offset < 0) bot.pending = bot.pending.slice(offset);
    else if (offset !== null) bot.pending = bot.pending.filter((p) => Number(p.update['update_id']) >= offset);
    return { status: 200, result: bot.pending.slice(0, limit).map((p) => p.update) };
  }

  private fresh(bot: BotUpdates): BotUpdates['pending'] {
    const since = this.now() - DAY_MS;
    return bot.pending.filter((p) => p.at > since);
  }

  private of(botId: string): BotUpdates {
    let bot = this.bots.get(botId);
    if (!bot) {
      bot = { webhookUrl: '', allowed: null, pending: [], nextId: 100_000_001 };
      this.bots.set(botId, bot);
    }
    return bot;
  }
}

/** A parameter as the fake's body parser keeps it (non-strings JSON-encoded), or its text. */
function parse(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
