// A platform's longest text and caption, checked on what one chat receives (rendered): variables and variations change the length per chat.
import { renderText, type MessageTemplate, type TargetVars, type TemplatedPart } from './message-template.js';
import type { SendFailure } from './send-result.js';

/** In UTF-16 code units, as the Telegram Bot API counts them (JavaScript's `length`). */
export interface TextLimits {
  text: number;
  caption: number;
}

export type RenderedText = { type: 'text'; text: string } | { type: 'media'; caption?: string };

export const TEXT_TOO_LONG = 'text_too_long';

/** The failure of a chat whose rendered parts do not fit `limits`, or null: never split, the chat fails whole before any part is sent. */
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
