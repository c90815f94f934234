import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from './connection.js';
import { SCRIPT_FILES, type ScriptName } from './script-names.js';
import { toScriptReply, type ScriptReplies } from './script-replies.js';
import { commandName, scriptSource, type ReadLua } from './script-source.js';

const LUA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../lua');

export { SCRIPT_FILES, type ScriptName } from './script-names.js';

export interface ScriptCommands {
  run<T>(script: ScriptReplies<T>, keys: string[], args: (string | number)[]): Promise<T>;
}

export const readLuaFile: ReadLua = (relativePath) => readFileSync(path.join(LUA_DIR, relativePath), 'utf8');

/** Loads every script once per connection with `defineCommand` (EVALSHA, falling back to EVAL, so a flushed Redis reloads them). */
export function loadScripts(redis: Pick<RedisClient, 'defineCommand'>, read: ReadLua = readLuaFile): ScriptCommands {
  const commands = new Map<ScriptName, string>();
  for (const file of SCRIPT_FILES) {
    const numberOfKeys = Number(file.slice(file.lastIndexOf('-') + 1));
    const lua = scriptSource(file, read);
    const command = commandName(file, lua);
    commands.set(file, command);
    if (!(command in redis)) redis.defineCommand(command, { numberOfKeys, lua });
  }
  return {
    run: async (script, keys, args) => {
      const fn = (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[commands.get(script.file)!];
      if (!fn) throw new Error(`script ${script.file} not loaded`);
      return script.decode(toScriptReply(script.file, await fn.call(redis, ...keys, ...args)));
    },
  };
}
