// Personal messages: a text or caption may name a target's variables (`{{name}}`, Mustache,
// logic-less) and vary (`{Hi|Hello}`, variation.ts). Compiled once per run and job, rendered
// per chat at send time; a text with neither is not compiled at all (the hot path stays as is).
import Mustache from 'mustache';
import { hasVariations, parseVariations, variationPick, type TextPiece } from './variation.js';

/** A variable name: what `{{…}}` may hold and what a target's `vars` may name. */
export const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** At most this many variables per target. */
export const MAX_TARGET_VARS = 50;
/** A variable's value is at most this many characters. */
export const MAX_VAR_VALUE_LENGTH = 1000;

/** A target's variables, name → value. */
export type TargetVars = Record<string, string>;

/** Which (run, chat, part) a text is rendered for: it decides the variation picks. */
export interface RenderKey {
  runId: string;
  chatId: string;
  partIndex: number;
}

/** A text that needs rendering: its variation pieces and the variables its tags use. */
export interface MessageTemplate {
  pieces: TextPiece[];
  /** the variables the text uses, in order of first use */
  variables: string[];
  // A writer of its own: Mustache's global one caches every template it ever parsed, which in a
  // long-lived sender would only grow. This cache lives as long as the compiled text.
  writer: InstanceType<typeof Mustache.Writer>;
}

/** A compiled text: null when it is plain (nothing to render), or why it cannot be used. */
export type CompiledText = { ok: true; template: MessageTemplate | null } | { ok: false; problem: string };

// Messages are plain text, not HTML: values go in exactly as given.
const AS_IS = { escape: (value: unknown) => String(value) };

const TAG_SIGILS: Record<string, string> = { '#': '#', '^': '^', '/': '/', '>': '>', '!': '!', '&': '&', '=': '=' };

/**
 * Compiles a message text. Only plain `{{name}}` tags are allowed (no sections, inverted
 * sections, partials, comments, unescaped tags or delimiter changes): users get variables,
 * not logic. A text without `{` is plain without being parsed.
 */
export function compileText(text: string): CompiledText {
  if (!text.includes('{')) return { ok: true, template: null };
  const pieces = parseVariations(text);
  const writer = new Mustache.Writer();
  const variables: string[] = [];
  for (const piece of pieceTexts(pieces)) {
    let tokens: unknown[][];
    try {
      tokens = writer.parse(piece) as unknown[][];
    } catch (error) {
      return { ok: false, problem: `is not a valid template: ${(error as Error).message}` };
    }
    for (const [type, value] of tokens as [string, string][]) {
      if (type === 'text') continue;
      if (type !== 'name') {
        return {
          ok: false,
          problem: `uses {{${TAG_SIGILS[type] ?? ''}${value}}}: only plain {{name}} variables are allowed (no sections, partials, comments or unescaped tags)`,
        };
      }
      if (!VAR_NAME.test(value)) {
        return { ok: false, problem: `uses {{${value}}}: a variable name is letters, digits and _, not starting with a digit, at most 64 characters` };
      }
      if (!variables.includes(value)) variables.push(value);
    }
  }
  if (variables.length === 0 && !hasVariations(pieces)) return { ok: true, template: null };
  return { ok: true, template: { pieces, variables, writer } };
}

/** The first variable of `variables` that `vars` lacks, or null. */
export function missingVariable(variables: string[], vars: TargetVars | null | undefined): string | null {
  for (const name of variables) if (!vars || !Object.hasOwn(vars, name)) return name;
  return null;
}

/**
 * The text a chat receives: each variation group replaced by the option picked for (run, chat,
 * part), then each `{{name}}` by the chat's value. A variable the chat lacks (only a text saved
 * before variables were checked can have one) stays as written rather than leaving a hole.
 */
export function renderText(t: MessageTemplate, key: RenderKey, vars: TargetVars | null): string {
  // Only the variables the text uses, on an object without a prototype: a tag can never reach
  // an inherited property (`{{constructor}}`).
  const view: Record<string, string> = Object.create(null);
  for (const name of t.variables) view[name] = vars && Object.hasOwn(vars, name) ? vars[name]! : `{{${name}}}`;
  let out = '';
  let group = 0;
  for (const piece of t.pieces) {
    const chosen = 'literal' in piece ? piece.literal : piece.options[variationPick(key, group++, piece.options.length)]!;
    // Each piece alone: the writer's cache then holds the pieces, not every combination of picks.
    out += chosen.includes('{{') ? t.writer.render(chosen, view, undefined, AS_IS) : chosen;
  }
  return out;
}

function pieceTexts(pieces: TextPiece[]): string[] {
  return pieces.flatMap((p) => ('literal' in p ? [p.literal] : p.options));
}
