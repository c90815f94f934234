import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

const LUA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../lua');

// Bump when any script changes, so two versions deployed side by side never share a name.
const SCRIPT_VERSION = 2;

const SCRIPTS = ['lock-acquire-1', 'lock-extend-1', 'lock-release-1', 'pace-reserve-3', 'lease-hold-1', 'lease-drop-1', 'socket-lease-acquire-2', 'socket-lease-renew-2', 'socket-lease-release-1', 'socket-lease-peek-1', 'rate-limit-1'] as const;
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
export function loadScripts(redis: Redis): ScriptCommands {
  for (const file of SCRIPTS) {
    const numberOfKeys = Number(file.slice(file.lastIndexOf('-') + 1));
    const lua = readFileSync(path.join(LUA_DIR, `${file}.lua`), 'utf8');
    const command = commandName(file);
    if (!(command in redis)) redis.defineCommand(command, { numberOfKeys, lua });
  }
  return {
    run: async (name, keys, args) => {
      const fn = (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<number>>)[commandName(name)];
      if (!fn) throw new Error(`script ${name} not loaded`);
      return Number(await fn.call(redis, ...keys, ...args));
    },
    runList: async (name, keys, args) => {
      const fn = (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[commandName(name)];
      if (!fn) throw new Error(`script ${name} not loaded`);
      const result = await fn.call(redis, ...keys, ...args);
      if (!Array.isArray(result)) throw new Error(`script ${name} returned ${typeof result}, not a list`);
      return result.map(Number);
    },
  };
}

function commandName(file: string): string {
  return `mtr_${file.replace(/-\d+$/, '').replaceAll('-', '_')}_v${SCRIPT_VERSION}`;
}
