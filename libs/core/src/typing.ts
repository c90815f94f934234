/** Typing first (CONTRACT §3, `typing`): the chat sees the account typing for a time proportional to the text before a message. */

export interface AccountTyping {
  charsPerSecond: number;
  maxSeconds: number;
}

export function defaultTyping(platform: string): AccountTyping | null {
  return platform === 'whatsapp' ? { charsPerSecond: 20, maxSeconds: 5 } : null;
}

export const MEDIA_TYPING_MS = 1_500;

export type TypedPart = { type: 'text'; text: string } | { type: 'media'; caption?: string | undefined };

/** How long the chat sees the account typing before `part`, ms: its text in code points (as a person counts them) at `charsPerSecond`, capped. */
export function typingMs(typing: AccountTyping, part: TypedPart): number {
  const text = part.type === 'text' ? part.text : (part.caption ?? '');
  const chars = [...text].length;
  const wanted = chars > 0 ? (chars / typing.charsPerSecond) * 1000 : part.type === 'media' ? MEDIA_TYPING_MS : 0;
  return Math.round(Math.min(typing.maxSeconds * 1000, wanted));
}

/** Whether a job's first send follows a platform wait that just ended: it goes without typing, which would add to the wait. */
export function followsPlatformWait(blockedUntil: Date | null, now: number, withinMs: number): boolean {
  return blockedUntil !== null && blockedUntil.getTime() <= now && now - blockedUntil.getTime() <= withinMs;
}
