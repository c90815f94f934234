// Personal messages: `{{name}}` variables (Mustache, logic-less; built-ins in chat-variables.ts), `{{name|fallback}}`, and `{Hi|Hello}` variations
// (variation.ts). Compiled once per job and rendered per chat; a text with neither is never compiled.
import Mustache from 'mustache';
import { BUILTIN_VARIABLES, isBuiltinVariable } from './chat-variables.js';
import { hasVariations, parseVariations, variationPick, type TextPiece } from './variation.js';

export const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const MAX_TARGET_VARS = 50;
export const MAX_VAR_VALUE_LENGTH = 1000;

export type TargetVars = Record<string, string>;

export interface RenderKey {
  runId: string;
  chatId: string;
  partIndex: number;
}

export interface MessageTemplate {
  pieces: TextPiece[];
  variables: string[];
  tags: Map<string, Tag>;
  builtins: boolean;
  // its own writer: Mustache's global one caches every template it ever parsed, which in a long-lived sender only grows
  writer: InstanceType<typeof Mustache.Writer>;
}

export interface Tag {
  name: string;
  fallback: string | null;
}

/** A compiled text: null when it is plain (nothing to render), or why it cannot be used. */
export type CompiledText = { ok: true; template: MessageTemplate | null } | { ok: false; problem: string };

const TAG_SIGILS: Record<string, string> = { '#': '#', '^': '^', '/': '/', '>': '>', '!': '!', '&': '&', '=': '=' };

/** Compiles a message text: only plain `{{name}}` or `{{name|fallback}}` tags (variables, not logic); a fallback may not hold `|`, `{` or `}`. */
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

export function missingVariable(variables: string[], vars: TargetVars | null | undefined): string | null {
  for (const name of variables) if (!vars || !Object.hasOwn(vars, name)) return name;
  return null;
}

/** The text a chat receives: variations picked for (run, chat, part), each tag filled from `vars` or its fallback; a tag with neither stays as written. */
export function renderText(t: MessageTemplate, key: RenderKey, vars: TargetVars | null): string {
  let out = '';
  eachSpan(t, key, vars, (text) => {
    out += text;
  });
  return out;
}

export type Filled = 'value' | 'fallback' | 'missing';

export interface RenderedSpan {
  text: string;
  variable: string | null;
  filled: Filled | null;
}

export function renderSpans(t: MessageTemplate, key: RenderKey, vars: TargetVars | null): RenderedSpan[] {
  const spans: RenderedSpan[] = [];
  eachSpan(t, key, vars, (text, tag, filled) => {
    const last = spans.at(-1);
    if (tag === null && last?.variable === null) last.text += text;
    else if (tag !== null || text !== '') spans.push({ text, variable: tag?.name ?? null, filled });
  });
  return spans;
}

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

export function usesBuiltins(texts: (string | undefined)[]): boolean {
  return texts.some((text) => {
    if (text === undefined || !text.includes('chat.')) return false;
    const compiled = compileText(text);
    return compiled.ok && compiled.template?.builtins === true;
  });
}

export type TemplatedPart = { type: 'text'; text: string } | { type: 'media'; caption?: string | undefined };

/** Compiles a run's parts once per job (null: plain); a text the API would now refuse is sent as written, so a stored campaign never starts failing. */
export function compileParts(parts: TemplatedPart[]): (MessageTemplate | null)[] {
  return parts.map((p) => {
    const text = p.type === 'text' ? p.text : p.caption;
    if (text === undefined) return null;
    const compiled = compileText(text);
    return compiled.ok ? compiled.template : null;
  });
}

export function personalPart<P extends TemplatedPart>(part: P, template: MessageTemplate | null, key: RenderKey, vars: TargetVars | null): P {
  if (template === null) return part;
  if (part.type === 'text') return { ...part, text: renderText(template, key, vars) };
  return part.caption === undefined ? part : { ...part, caption: renderText(template, key, vars) };
}
