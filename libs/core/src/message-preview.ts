// A campaign's message as one chat gets it, for the preview: rendered by the sender's own rule
// (message-template.ts renderSpans over chat-variables.ts chatVariables), each variable's value
// marked with where it came from, so a console can show which spots a fallback filled.
import { chatVariables, type ChatFacts } from './chat-variables.js';
import { compileText, renderSpans, type RenderKey } from './message-template.js';

/** Where a variable's value came from: the chat's own variables, a built-in from the chat directory, the tag's fallback; missing: none (the tag goes as written). */
export type VariableSource = 'own' | 'directory' | 'fallback' | 'missing';

/** A stretch of a previewed text: text as written (`variable` and `from` null), or one tag's value. */
export interface PreviewSpan {
  text: string;
  variable: string | null;
  from: VariableSource | null;
}

/** A text as the chat gets it, whole and in stretches. */
export interface PreviewText {
  text: string;
  spans: PreviewSpan[];
}

/**
 * Each of `texts` (a part's text or caption, in part order; undefined: a media part without a
 * caption, answered null) as the chat `key.chatId` receives it, rendered with its own variables
 * `own` over its built-ins from `facts`, as a run takes them. Variations are picked for
 * (`key.runId`, chat, part) as a run with that id would pick them.
 */
export function previewTexts(
  texts: (string | undefined)[],
  key: Omit<RenderKey, 'partIndex'>,
  own: Record<string, string> | null,
  facts: ChatFacts | null,
): (PreviewText | null)[] {
  const vars = chatVariables(own, facts);
  return texts.map((text, partIndex) => {
    if (text === undefined) return null;
    const compiled = compileText(text);
    // a plain text (or one the API would have refused) goes as written
    if (!compiled.ok || compiled.template === null) return { text, spans: text === '' ? [] : [{ text, variable: null, from: null }] };
    const spans = renderSpans(compiled.template, { ...key, partIndex }, vars).map(
      (s): PreviewSpan => ({
        text: s.text,
        variable: s.variable,
        from: s.filled === 'value' ? (own && Object.hasOwn(own, s.variable!) ? 'own' : 'directory') : s.filled,
      }),
    );
    return { text: spans.map((s) => s.text).join(''), spans };
  });
}
