import { createHash } from 'node:crypto';
import { luaCodeTable } from './script-codes.js';

/** Reads a file below lua/ by its relative path (the loader passes the disk; tests pass a map). */
export type ReadLua = (relativePath: string) => string;

/**
 * Redis has no includes: a script is one self-contained body sent with EVAL. So a line
 * `--#include NAME.lua` is replaced, at load time, by the text of lua/include/NAME.lua: code
 * shared by several scripts (the GCRA) is written once and still reaches Redis whole. An
 * included file may not include another, which keeps each script's shape visible from its file.
 */
export function expandIncludes(file: string, lua: string, read: ReadLua): string {
  return lua.replace(/^--#include[ \t]+(\S+)[ \t]*$/gm, (_line, name: string) => {
    const text = read(`include/${name}`);
    if (/^--#include/m.test(text)) throw new Error(`lua/include/${name} (included by ${file}) may not include another file`);
    return text.endsWith('\n') ? text.slice(0, -1) : text;
  });
}

/** The body Redis runs for lua/FILE.lua: the return-code table, then the script with its includes. */
export function scriptSource(file: string, read: ReadLua): string {
  return luaCodeTable() + expandIncludes(file, read(`${file}.lua`), read);
}

/**
 * The name a script is defined under on a connection: a hash of the body Redis runs (its
 * includes and the code table too), so editing any of them can never call a body loaded before
 * under the same name, and no version is bumped by hand.
 *
 * The name only matters inside one process: Redis caches a script by the SHA1 of its body
 * (EVALSHA), so two replicas on different versions each run their own body. What they do share
 * is the keys: a change to what a key holds needs a new key name (keys.ts), not a new script name.
 * The number at the end of a file's name is its count of KEYS (BullMQ's habit, read by the
 * loader), not a version, and stays.
 */
export function commandName(file: string, source: string): string {
  const version = createHash('sha256').update(source).digest('hex').slice(0, 10);
  return `mtr_${file.replace(/-\d+$/, '').replaceAll('-', '_')}_${version}`;
}
