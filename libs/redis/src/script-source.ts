import { createHash } from 'node:crypto';
import { luaCodeTable } from './script-codes.js';

export type ReadLua = (relativePath: string) => string;

/** Redis has no includes: a `--#include NAME.lua` line becomes lua/include/NAME.lua's text at load time, one level only. */
export function expandIncludes(file: string, lua: string, read: ReadLua): string {
  return lua.replace(/^--#include[ \t]+(\S+)[ \t]*$/gm, (_line, name: string) => {
    const text = read(`include/${name}`);
    if (/^--#include/m.test(text)) throw new Error(`lua/include/${name} (included by ${file}) may not include another file`);
    return text.endsWith('\n') ? text.slice(0, -1) : text;
  });
}

export function scriptSource(file: string, read: ReadLua): string {
  return luaCodeTable() + expandIncludes(file, read(`${file}.lua`), read);
}

/** A hash of the body Redis runs (includes and codes too), so an edited script never calls a body loaded before; a key's new meaning needs a new key. */
export function commandName(file: string, source: string): string {
  const version = createHash('sha256').update(source).digest('hex').slice(0, 10);
  return `mtr_${file.replace(/-\d+$/, '').replaceAll('-', '_')}_${version}`;
}
