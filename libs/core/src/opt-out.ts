/** Opt-out by reply (CONTRACT §3, `optOutKeywords`): a chat that answers only one of its account's keywords joins the suppression list. */

/**
 * What a new WhatsApp or telegram_user account listens for: both are a person's account writing to people one to one, where an
 * unanswered "stop" turns into a spam report. Bots (`telegram`) and `http` read no replies.
 */
export const DEFAULT_OPT_OUT_KEYWORDS: readonly string[] = ['STOP', 'UNSUBSCRIBE'];

/** A longer reply can be dropped before any lookup. */
export const MAX_OPT_OUT_KEYWORD_LENGTH = 64;

export function defaultOptOutKeywords(platform: string): string[] {
  return platform === 'whatsapp' || platform === 'telegram_user' ? [...DEFAULT_OPT_OUT_KEYWORDS] : [];
}

/** Trimmed, NFC, `toUpperCase` (not the locale's: a Turkish locale turns `i` into `İ`); accents still count. */
function comparable(text: string): string {
  return text.trim().normalize('NFC').toUpperCase();
}

/** Whether a reply could be a keyword at all (room for blanks and NFC-composed characters): most replies are answered without a query. */
export function couldBeOptOut(text: string): boolean {
  return text.length <= 4 * MAX_OPT_OUT_KEYWORD_LENGTH && text.trim().length > 0;
}

/** The keyword a reply is, as the account lists it, or null: the whole message must be it ("stop it please" is no opt-out). */
export function optOutKeyword(text: string, keywords: readonly string[]): string | null {
  if (keywords.length === 0 || !couldBeOptOut(text)) return null;
  const reply = comparable(text);
  if (reply.length === 0) return null;
  return keywords.find((k) => comparable(k) === reply) ?? null;
}
