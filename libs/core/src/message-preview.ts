// A campaign's message as one chat gets it, rendered by the sender's own rule, each value marked with where it came from (a console shows fallbacks).
import { chatVariables, type ChatFacts } from './chat-variables.js';
import { compileText, renderSpans, type RenderKey } from './message-template.js';

export type VariableSource = 'own' | 'directory' | 'fallback' | 'missing';

export interface PreviewSpan {
  text: string;
  variable: string | null;
  from: VariableSource | null;
}

export interface PreviewText {
  text: string;
  spans: PreviewSpan[];
}

/** Each of `texts` (undefined: a media part without a caption, answered null) as chat `key.chatId` receives it in a run with id `key.runId`. */
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
