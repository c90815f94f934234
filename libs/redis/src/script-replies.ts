import { codeName, type CodeName } from './script-codes.js';
import type { ScriptName } from './script-names.js';

/** What a script returned: its code and, for codes that carry one, a duration in ms (else 0), and any further durations (a reservation of several slots). */
export interface ScriptReply {
  code: number;
  ms: number;
  more?: number[];
}

/** A script and how its wrapper reads every code the script returns. */
export interface ScriptReplies<T> {
  readonly file: ScriptName;
  /** the codes decoded; a unit test holds them equal to the codes the script's source returns */
  readonly codes: readonly CodeName[];
  decode(reply: ScriptReply): T;
}

/**
 * Declares how a wrapper reads `file`'s replies, one case per code. A code with no case is a
 * script and wrapper out of step: it throws, naming both, instead of falling into a default.
 */
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

/** release-1, the compare-and-delete of every lock and lease: true when the token held it */
export const releaseReplies = scriptReplies('release-1', { OK: () => true, NOT_HOLDER: () => false });

/** A raw Redis reply as ScriptReply: a bare code, `{code, ms}`, or `{code, ms, ms…}`. */
export function toScriptReply(file: ScriptName, raw: unknown): ScriptReply {
  if (Array.isArray(raw))
    return raw.length > 2 ? { code: Number(raw[0]), ms: Number(raw[1]), more: raw.slice(2).map(Number) } : { code: Number(raw[0]), ms: Number(raw[1] ?? 0) };
  if (typeof raw === 'number') return { code: raw, ms: 0 };
  throw new Error(`script ${file} returned ${typeof raw}, not a code`);
}
