/**
 * The ban-safety settings of an account (CONTRACT §3, accounts): human pacing and caps. Pure:
 * the sender turns them into the arguments of its one pace reservation per send.
 */

/** A uniform random wait, in seconds, between an account's sends (on top of its pace). */
export interface SendDelay {
  min: number;
  max: number;
}

/** What a new account gets when it sets no `sendDelaySeconds`: WhatsApp bans machine-regular senders. */
export function defaultSendDelay(platform: string): SendDelay | null {
  return platform === 'whatsapp' ? { min: 30, max: 60 } : null;
}

/**
 * The wait after a send before the account's next one, ms: uniform in [min, max] from
 * `random` (a source in [0, 1), passed in so a test can set it).
 */
export function drawSendDelayMs(delay: SendDelay, random: () => number): number {
  const span = Math.max(0, delay.max - delay.min) * 1000;
  return Math.floor(delay.min * 1000 + random() * span);
}

/** Rolling windows of the caps. */
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/**
 * Added to `sendDelaySeconds.min` where a sender measures the gap by its own writes: a request
 * is received a little after it is written, and two requests' transit times differ.
 */
export const SEND_GAP_MARGIN_MS = 50;

/** The per-send limits one reservation enforces; null when the account has none (the plain pace path). */
export interface SendLimits {
  /** the least gap between two sends, ms (0: no human pacing) */
  minDelayMs: number;
  /** draws the gap after one send, ms */
  delay: SendDelay | null;
  /** sends in any rolling hour; 0: none */
  hourlyCap: number;
  /** sends in any rolling 24 hours (the account's dailyCap and today's warm-up cap, the lower); 0: none */
  dailyCap: number;
}

/** The limits of an account, or null when it sets none of them (its sends pay nothing extra). */
export function sendLimits(a: { sendDelay: SendDelay | null; hourlyCap: number | null; dailyCap: number | null }): SendLimits | null {
  if (!a.sendDelay && !a.hourlyCap && !a.dailyCap) return null;
  return {
    minDelayMs: a.sendDelay ? a.sendDelay.min * 1000 : 0,
    delay: a.sendDelay,
    hourlyCap: a.hourlyCap ?? 0,
    dailyCap: a.dailyCap ?? 0,
  };
}

/** A Telegram user account's refusals of a chat (MTProto error codes, lower-cased): the chat fails, is suppressed and marked in the directory. */
export const TELEGRAM_USER_REFUSALS: readonly string[] = [
  'chat_write_forbidden',
  'channel_private',
  'chat_admin_required',
  'chat_restricted',
  // a user blocked the account, or the account blocked them
  'user_is_blocked',
  'you_blocked_user',
];

/**
 * Permanent answers that mean the chat does not want, or cannot get, the account's messages:
 * blocked, kicked, forbidden or not found (Telegram's `bot_blocked`, `bot_kicked`; the HTTP
 * platform's and WhatsApp's `forbidden`, `chat_not_found`). The chat joins the account's
 * suppression list: writing to it again is what gets numbers reported and banned.
 */
export const SUPPRESSING_CODES: readonly string[] = [
  'chat_not_found',
  'forbidden',
  'bot_blocked',
  'bot_kicked',
  // a Telegram user account's refusals (telegram_user)
  ...TELEGRAM_USER_REFUSALS,
];

/** Whether a permanent failure with `code` suppresses its chat. */
export function suppresses(code: string): boolean {
  return SUPPRESSING_CODES.includes(code);
}
