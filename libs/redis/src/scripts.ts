import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from './connection.js';

const LUA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../lua');

const SCRIPTS = ['lock-acquire-1', 'lock-extend-1', 'lock-release-1', 'pace-reserve-3', 'pace-settle-1', 'pace-reserve-safe-6', 'pace-seed-3', 'pace-gap-settle-1', 'lease-hold-1', 'lease-drop-1', 'socket-lease-acquire-2', 'socket-lease-renew-2', 'socket-lease-release-1', 'socket-lease-peek-1', 'rate-limit-1'] as const;
type ScriptName = (typeof SCRIPTS)[number];

export interface ScriptCommands {
  run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<number>;
  /** for scripts that return an array of integers */
  runList(name: ScriptName, keys: string[], args: (string | number)[]): Promise<number[]>;
}

/**
 * Loads every Lua script once per connection with `defineCommand` (EVALSHA with an EVAL
 * fallback, so a flushed or restarted Redis reloads them by itself).
 */
export function loadScripts(redis: RedisClient): ScriptCommands {
  const commands = new Map<string, string>();
  for (const file of SCRIPTS) {
    const numberOfKeys = Number(file.slice(file.lastIndexOf('-') + 1));
    const lua = readFileSync(path.join(LUA_DIR, `${file}.lua`), 'utf8');
    const command = commandName(file, lua);
    commands.set(file, command);
    if (!(command in redis)) redis.defineCommand(command, { numberOfKeys, lua });
  }
  const commandOf = (name: ScriptName) => commands.get(name)!;
  return {
    run: async (name, keys, args) => {
      const fn = (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<number>>)[commandOf(name)];
      if (!fn) throw new Error(`script ${name} not loaded`);
      return Number(await fn.call(redis, ...keys, ...args));
    },
    runList: async (name, keys, args) => {
      const fn = (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[commandOf(name)];
      if (!fn) throw new Error(`script ${name} not loaded`);
      const result = await fn.call(redis, ...keys, ...args);
      if (!Array.isArray(result)) throw new Error(`script ${name} returned ${typeof result}, not a list`);
      return result.map(Number);
    },
  };
}

/**
 * The command's name carries a hash of the script's source, so two versions deployed side by
 * side never share a name and no version number is bumped by hand.
 */
function commandName(file: string, lua: string): string {
  const version = createHash('sha256').update(lua).digest('hex').slice(0, 10);
  return `mtr_${file.replace(/-\d+$/, '').replaceAll('-', '_')}_${version}`;
}
