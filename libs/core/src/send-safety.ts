/** An account's ban-safety settings (CONTRACT §3): human pacing and caps, which the sender turns into its one pace reservation per send. */

/** A uniform random wait, in seconds, between an account's sends (on top of its pace). */
export interface SendDelay {
  min: number;
  max: number;
}

/** What a new account gets when it sets no `sendDelaySeconds`: WhatsApp bans machine-regular senders. */
export function defaultSendDelay(platform: string): SendDelay | null {
  return platform === 'whatsapp' ? { min: 30, max: 60 } : null;
}

export function drawSendDelayMs(delay: SendDelay, random: () => number): number {
  const span = Math.max(0, delay.max - delay.min) * 1000;
  return Math.floor(delay.min * 1000 + random() * span);
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** Added to the least gap where a sender measures it by its own writes: requests are received a little after they are written, unevenly. */
export const SEND_GAP_MARGIN_MS = 50;

export interface SendLimits {
  /** the least gap between two sends, ms (0: no human pacing) */
  minDelayMs: number;
  delay: SendDelay | null;
  hourlyCap: number;
  /** sends in any rolling 24 hours (the account's dailyCap and today's warm-up cap, the lower); 0: none */
  dailyCap: number;
}

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
  'user_is_blocked',
  'you_blocked_user',
];

/** Answers that mean the chat does not want or cannot get the account's messages: it is suppressed, since writing to it again gets numbers banned. */
export const SUPPRESSING_CODES: readonly string[] = ['chat_not_found', 'forbidden', 'bot_blocked', 'bot_kicked', ...TELEGRAM_USER_REFUSALS];

export function suppresses(code: string): boolean {
  return SUPPRESSING_CODES.includes(code);
}
