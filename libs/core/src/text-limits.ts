// A platform's longest text and caption, checked on what one chat receives (rendered), not on
// the template: variables and variations change the length per chat.
import { renderText, type MessageTemplate, type TargetVars, type TemplatedPart } from './message-template.js';
import type { SendFailure } from './send-result.js';

/** The longest text and caption a platform takes, in UTF-16 code units. */
export interface TextLimits {
  text: number;
  caption: number;
}

/** A chat's rendered part, as far as its length goes. */
export type RenderedText = { type: 'text'; text: string } | { type: 'media'; caption?: string };

/** The code a chat fails with when one of its rendered parts is longer than the platform takes. */
export const TEXT_TOO_LONG = 'text_too_long';

/**
 * The failure of a chat whose rendered parts do not fit `limits`, or null. Lengths are counted
 * in UTF-16 code units, as the Telegram Bot API counts them (JavaScript's `length`): an emoji
 * outside the BMP counts 2. Never split: the chat fails whole, before any part is sent.
 */
export function textOverLimit(parts: RenderedText[], limits: TextLimits, firstIndex = 0): SendFailure | null {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const [what, length, limit] = part.type === 'text' ? ['text', part.text.length, limits.text] : ['caption', part.caption?.length ?? 0, limits.caption];
    if (length > limit) {
      return {
        kind: 'rejected',
        code: TEXT_TOO_LONG,
        message: `part ${firstIndex + i}: the ${what} for this chat is ${length} characters (UTF-16 code units) once rendered; the platform takes at most ${limit}`,
      };
    }
  }
  return null;
}

/**
 * The failure of a chat one of whose parts, from `from` on, is longer once rendered for it than
 * the platform takes, or null: checked before its first part goes, so a chat gets all or none.
 */
export function chatTextOverLimit(
  parts: TemplatedPart[],
  templates: (MessageTemplate | null)[],
  limits: TextLimits | undefined,
  key: { runId: string; chatId: string },
  vars: TargetVars | null,
  from: number,
): SendFailure | null {
  if (!limits) return null;
  const rendered: RenderedText[] = [];
  for (let index = from; index < parts.length; index++) {
    const part = parts[index]!;
    const template = templates[index] ?? null;
    const text = part.type === 'text' ? part.text : part.caption;
    const final = template === null || text === undefined ? text : renderText(template, { ...key, partIndex: index }, vars);
    rendered.push(part.type === 'text' ? { type: 'text', text: final ?? '' } : final === undefined ? { type: 'media' } : { type: 'media', caption: final });
  }
  return textOverLimit(rendered, limits, from);
}
