import { codeName, type CodeName } from './script-codes.js';
import type { ScriptName } from './script-names.js';

export interface ScriptReply {
  code: number;
  ms: number;
  more?: number[];
}

export interface ScriptReplies<T> {
  readonly file: ScriptName;
  readonly codes: readonly CodeName[];
  decode(reply: ScriptReply): T;
}

/** How a wrapper reads `file`'s replies, one case per code; a code with no case throws, naming both, rather than falling into a default. */
export function scriptReplies<T>(file: ScriptName, cases: { readonly [K in CodeName]?: (ms: number, more: number[]) => T }): ScriptReplies<T> {
  const codes = Object.keys(cases) as CodeName[];
  return {
    file,
    codes,
    decode(reply) {
      const name = codeName(reply.code);
      const read = name === undefined ? undefined : cases[name];
      if (!read) throw new Error(`script ${file} returned code ${reply.code} (${name ?? 'not in ScriptCode'}), which its wrapper does not decode`);
      return read(reply.ms, reply.more ?? []);
    },
  };
}

export const releaseReplies = scriptReplies('release-1', { OK: () => true, NOT_HOLDER: () => false });

export function toScriptReply(file: ScriptName, raw: unknown): ScriptReply {
  if (Array.isArray(raw))
    return raw.length > 2 ? { code: Number(raw[0]), ms: Number(raw[1]), more: raw.slice(2).map(Number) } : { code: Number(raw[0]), ms: Number(raw[1] ?? 0) };
  if (typeof raw === 'number') return { code: raw, ms: 0 };
  throw new Error(`script ${file} returned ${typeof raw}, not a code`);
}
