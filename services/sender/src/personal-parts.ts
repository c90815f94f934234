import { compileText, renderText, textOverLimit, type MessageTemplate, type RenderedText, type RenderKey, type SendFailure, type TextLimits } from '@metronome/core';
import type { MessagePart } from '@metronome/db';
import type { OutgoingPart } from '@metronome/transports';

/** Each part's compiled text or caption: null when it is plain (sent as it is, no work per send). */
export type PartTemplates = (MessageTemplate | null)[];

/**
 * Compiles a run's parts once per job. A text the API would refuse today (saved before
 * templates were checked) is sent as written, as it was before: a stored campaign never
 * starts failing.
 */
export function compileParts(parts: MessagePart[]): PartTemplates {
  return parts.map((p) => {
    const text = p.type === 'text' ? p.text : p.caption;
    if (text === undefined) return null;
    const compiled = compileText(text);
    return compiled.ok ? compiled.template : null;
  });
}

/**
 * The part as one chat receives it: its variables filled in and its variations picked for
 * (run, chat, part), so every re-send of the chat in this run carries the same text.
 */
export function personalPart(part: OutgoingPart, template: MessageTemplate | null, key: RenderKey, vars: Record<string, string> | null): OutgoingPart {
  if (template === null) return part;
  if (part.type === 'text') return { ...part, text: renderText(template, key, vars) };
  return part.caption === undefined ? part : { ...part, caption: renderText(template, key, vars) };
}

/**
 * The failure of a chat one of whose parts, from `from` on, is longer once rendered for it
 * than the platform takes (`text_too_long`), or null. Checked before the chat's first part
 * goes out, so a chat gets its whole message or none of it.
 */
export function chatTextOverLimit(
  parts: MessagePart[],
  templates: PartTemplates,
  limits: TextLimits | undefined,
  key: { runId: string; chatId: string },
  vars: Record<string, string> | null,
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
