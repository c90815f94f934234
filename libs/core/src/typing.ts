/**
 * Typing first (CONTRACT §3, accounts: `typing`): before a message, the chat sees the account
 * typing for a time proportional to the text. Pure: the sender decides when, the transports how.
 */

/** An account's typing settings: `charsPerSecond` of text, never longer than `maxSeconds`. */
export interface AccountTyping {
  charsPerSecond: number;
  maxSeconds: number;
}

/** What a new WhatsApp account gets: a brisk typist (20 characters a second), at most 5 s. */
export function defaultTyping(platform: string): AccountTyping | null {
  return platform === 'whatsapp' ? { charsPerSecond: 20, maxSeconds: 5 } : null;
}

/** How long a media without a caption is "prepared" before it goes: a short, fixed time. */
export const MEDIA_TYPING_MS = 1_500;

/** The part of a message typing is measured on. */
export type TypedPart = { type: 'text'; text: string } | { type: 'media'; caption?: string | undefined };

/**
 * How long the chat sees the account typing before `part`, ms: its text (a media's caption)
 * at `charsPerSecond`, counted in characters as a person sees them (code points, not UTF-16
 * units), capped at `maxSeconds`; a media without a caption MEDIA_TYPING_MS (capped too).
 */
export function typingMs(typing: AccountTyping, part: TypedPart): number {
  const text = part.type === 'text' ? part.text : (part.caption ?? '');
  const chars = [...text].length;
  const wanted = chars > 0 ? (chars / typing.charsPerSecond) * 1000 : part.type === 'media' ? MEDIA_TYPING_MS : 0;
  return Math.round(Math.min(typing.maxSeconds * 1000, wanted));
}

/**
 * Whether a job's first send follows a platform wait that just ended (within `withinMs` of its
 * end, as the job deferred by it does): that send goes without typing, which would add to the wait.
 */
export function followsPlatformWait(blockedUntil: Date | null, now: number, withinMs: number): boolean {
  return blockedUntil !== null && blockedUntil.getTime() <= now && now - blockedUntil.getTime() <= withinMs;
}
