/**
 * Opt-out by reply (CONTRACT §3, accounts: `optOutKeywords`). A chat that answers one of its
 * account's keywords, and nothing else, joins the account's suppression list. Pure: the
 * transport hands in the text, the sender writes the list.
 */

/** What a new WhatsApp account listens for; other platforms read no replies. */
export const DEFAULT_OPT_OUT_KEYWORDS: readonly string[] = ['STOP', 'UNSUBSCRIBE'];

/** The longest keyword an account may set: a longer reply can be dropped before any lookup. */
export const MAX_OPT_OUT_KEYWORD_LENGTH = 64;

/** The keywords a new account gets when its POST names none. */
export function defaultOptOutKeywords(platform: string): string[] {
  return platform === 'whatsapp' ? [...DEFAULT_OPT_OUT_KEYWORDS] : [];
}

/**
 * A text as it is compared: trimmed, NFC, and upper-cased with Unicode's default case mapping.
 * `toUpperCase` rather than `toLocaleUpperCase()`: the same reply matches the same way whatever
 * the server's locale (a Turkish locale would turn `i` into `İ`). Accents still count (`stóp`
 * is not `STOP`): a keyword in another language is listed as that language writes it.
 */
function comparable(text: string): string {
  return text.trim().normalize('NFC').toUpperCase();
}

/**
 * Whether a reply could be a keyword at all, before the account's keywords are read: not blank,
 * and no longer than a keyword can be (with room for blanks around it and for decomposed
 * characters that NFC composes). Most replies are sentences, answered without a query.
 */
export function couldBeOptOut(text: string): boolean {
  return text.length <= 4 * MAX_OPT_OUT_KEYWORD_LENGTH && text.trim().length > 0;
}

/**
 * The keyword a reply is, as the account lists it, or null. The whole message must be the
 * keyword (surrounding blanks aside, any case): "stop it please" is a sentence, not an opt-out.
 */
export function optOutKeyword(text: string, keywords: readonly string[]): string | null {
  if (keywords.length === 0 || !couldBeOptOut(text)) return null;
  const reply = comparable(text);
  if (reply.length === 0) return null;
  return keywords.find((k) => comparable(k) === reply) ?? null;
}
