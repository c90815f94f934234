// Personal messages: a text or caption may name a target's variables (`{{name}}`, Mustache,
// logic-less) or a built-in one (`{{chat.title}}`, chat-variables.ts), with a fallback for a
// chat without one (`{{name|there}}`), and vary
// (`{Hi|Hello}`, variation.ts). Compiled once per run and job, rendered
// per chat at send time; a text with neither is not compiled at all (the hot path stays as is).
import Mustache from 'mustache';
import { BUILTIN_VARIABLES, isBuiltinVariable } from './chat-variables.js';
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
  /** the variables every chat needs a value for (used at least once without a fallback), in order of first use */
  variables: string[];
  /** each tag as written (`name|there`) → its variable and fallback */
  tags: Map<string, Tag>;
  /** whether a tag names a built-in variable (with or without a fallback): rendering it needs the chat's directory entry */
  builtins: boolean;
  // A writer of its own: Mustache's global one caches every template it ever parsed, which in a
  // long-lived sender would only grow. This cache lives as long as the compiled text.
  writer: InstanceType<typeof Mustache.Writer>;
}

/** A `{{…}}` tag: the variable it names and, after a `|`, what a chat without it gets. */
export interface Tag {
  name: string;
  fallback: string | null;
}

/** A compiled text: null when it is plain (nothing to render), or why it cannot be used. */
export type CompiledText = { ok: true; template: MessageTemplate | null } | { ok: false; problem: string };

const TAG_SIGILS: Record<string, string> = { '#': '#', '^': '^', '/': '/', '>': '>', '!': '!', '&': '&', '=': '=' };

/**
 * Compiles a message text. Only plain `{{name}}` tags are allowed (no sections, inverted
 * sections, partials, comments, unescaped tags or delimiter changes): users get variables,
 * not logic. A tag may end in `|fallback`: the text a chat without that variable gets (spaces
 * around it trimmed; it may be empty; it may not hold `|`, `{` or `}`, which would make the
 * tag's end ambiguous). A text without `{` is plain without being parsed.
 */
export function compileText(text: string): CompiledText {
  if (!text.includes('{')) return { ok: true, template: null };
  const pieces = parseVariations(text);
  const writer = new Mustache.Writer();
  const variables: string[] = [];
  const tags = new Map<string, Tag>();
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
      const tag = readTag(value);
      if (typeof tag === 'string') return { ok: false, problem: tag };
      tags.set(value, tag);
      if (tag.fallback === null && !variables.includes(tag.name)) variables.push(tag.name);
    }
  }
  if (tags.size === 0 && !hasVariations(pieces)) return { ok: true, template: null };
  const builtins = [...tags.values()].some((t) => isBuiltinVariable(t.name));
  return { ok: true, template: { pieces, variables, tags, builtins, writer } };
}

// A tag's content (Mustache trims it) as a variable and fallback, or why it cannot be one.
function readTag(value: string): Tag | string {
  const bar = value.indexOf('|');
  const name = (bar === -1 ? value : value.slice(0, bar)).trim();
  const fallback = bar === -1 ? null : value.slice(bar + 1).trim();
  if (!VAR_NAME.test(name) && !isBuiltinVariable(name)) {
    return `uses {{${value}}}: a variable name is letters, digits and _, not starting with a digit, at most 64 characters, or a built-in one (${BUILTIN_VARIABLES.join(', ')})`;
  }
  if (fallback !== null && /[|{}]/.test(fallback)) return `uses {{${value}}}: a fallback (after the |) may not hold |, { or }`;
  return { name, fallback };
}

/** The first variable of `variables` that `vars` lacks, or null. */
export function missingVariable(variables: string[], vars: TargetVars | null | undefined): string | null {
  for (const name of variables) if (!vars || !Object.hasOwn(vars, name)) return name;
  return null;
}

/**
 * The text a chat receives: each variation group replaced by the option picked for (run, chat,
 * part), then each `{{name}}` by the chat's value, or its fallback when the chat has none.
 * `vars` are the chat's variables as chatVariables gives them (its own over its built-ins). A
 * variable the chat lacks with no fallback (only a text saved before variables were checked can
 * have one) stays as written rather than leaving a hole.
 */
export function renderText(t: MessageTemplate, key: RenderKey, vars: TargetVars | null): string {
  let out = '';
  eachSpan(t, key, vars, (text) => {
    out += text;
  });
  return out;
}

/** What filled a tag: the chat's value for its variable, the tag's fallback, or neither (the tag stays as written). */
export type Filled = 'value' | 'fallback' | 'missing';

/** A stretch of a rendered text: text as written (`variable` null), or what one tag became. */
export interface RenderedSpan {
  text: string;
  /** the variable the tag names; null: text of the template */
  variable: string | null;
  filled: Filled | null;
}

/**
 * renderText's result in stretches, each tag's apart with what filled it (a preview marks a
 * fallback); joined, the spans are exactly renderText's text. Adjacent text stretches are one.
 */
export function renderSpans(t: MessageTemplate, key: RenderKey, vars: TargetVars | null): RenderedSpan[] {
  const spans: RenderedSpan[] = [];
  eachSpan(t, key, vars, (text, tag, filled) => {
    const last = spans.at(-1);
    if (tag === null && last?.variable === null) last.text += text;
    else if (tag !== null || text !== '') spans.push({ text, variable: tag?.name ?? null, filled });
  });
  return spans;
}

// The one renderer: the text of each stretch in order, each tag's with its tag and what filled it.
function eachSpan(t: MessageTemplate, key: RenderKey, vars: TargetVars | null, emit: (text: string, tag: Tag | null, filled: Filled | null) => void): void {
  let group = 0;
  for (const piece of t.pieces) {
    const chosen = 'literal' in piece ? piece.literal : piece.options[variationPick(key, group++, piece.options.length)]!;
    if (!chosen.includes('{{')) {
      emit(chosen, null, null);
      continue;
    }
    // Each piece alone: the writer's cache then holds the pieces, not every combination of picks.
    for (const [type, value] of t.writer.parse(chosen) as [string, string][]) {
      if (type === 'text') {
        emit(value, null, null);
        continue;
      }
      const tag = t.tags.get(value)!;
      // own properties only: a tag never reaches an inherited one (`{{constructor}}`)
      if (vars && Object.hasOwn(vars, tag.name)) emit(vars[tag.name]!, tag, 'value');
      else if (tag.fallback !== null) emit(tag.fallback, tag, 'fallback');
      else emit(`{{${value}}}`, tag, 'missing');
    }
  }
}

function pieceTexts(pieces: TextPiece[]): string[] {
  return pieces.flatMap((p) => ('literal' in p ? [p.literal] : p.options));
}

/** Whether any of the texts names a built-in variable (a text that is not a valid template names none). */
export function usesBuiltins(texts: (string | undefined)[]): boolean {
  return texts.some((text) => {
    if (text === undefined || !text.includes('chat.')) return false;
    const compiled = compileText(text);
    return compiled.ok && compiled.template?.builtins === true;
  });
}

/** A message part as far as rendering goes: a text, or a media with its caption. */
export type TemplatedPart = { type: 'text'; text: string } | { type: 'media'; caption?: string | undefined };

/**
 * Compiles a run's parts once per job (null: plain, sent as it is). A text the API would refuse
 * today (saved before templates were checked) is sent as written: a stored campaign never starts failing.
 */
export function compileParts(parts: TemplatedPart[]): (MessageTemplate | null)[] {
  return parts.map((p) => {
    const text = p.type === 'text' ? p.text : p.caption;
    if (text === undefined) return null;
    const compiled = compileText(text);
    return compiled.ok ? compiled.template : null;
  });
}

/** The part as one chat receives it: its variables filled in and its variations picked for (run, chat, part). */
export function personalPart<P extends TemplatedPart>(part: P, template: MessageTemplate | null, key: RenderKey, vars: TargetVars | null): P {
  if (template === null) return part;
  if (part.type === 'text') return { ...part, text: renderText(template, key, vars) };
  return part.caption === undefined ? part : { ...part, caption: renderText(template, key, vars) };
}
