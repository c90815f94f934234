import { luaCodeTable } from './script-codes.js';
import { commandName, expandIncludes, scriptSource, type ReadLua } from './script-source.js';
import { loadScripts, readLuaFile, SCRIPT_FILES } from './scripts.js';

/** lua/ as it is on disk, with some files replaced */
function luaWith(replaced: Record<string, string>): ReadLua {
  return (relativePath) => replaced[relativePath] ?? readLuaFile(relativePath);
}

/** The command names and bodies the loader defines on a connection, read through `read`. */
function defined(read: ReadLua): Map<string, { name: string; lua: string }> {
  const byFile = new Map<string, { name: string; lua: string }>();
  const names: { name: string; lua: string }[] = [];
  loadScripts({ defineCommand: (name: string, def: { lua?: string }) => void names.push({ name, lua: def.lua ?? '' }) } as never, read);
  SCRIPT_FILES.forEach((file, i) => byFile.set(file, names[i]!));
  return byFile;
}

describe('script source: includes and a version from the hash of what Redis runs', () => {
  test('an include line is replaced by the shared file; the code table comes first', () => {
    const read: ReadLua = (p) => ({ 'a-1.lua': '-- a\n--#include shared.lua\nreturn CODE.OK\n', 'include/shared.lua': 'local function f() end\n' })[p]!;
    expect(scriptSource('a-1', read)).toBe(`${luaCodeTable()}-- a\nlocal function f() end\nreturn CODE.OK\n`);
  });

  test('an included file that includes another is refused, naming both', () => {
    const read: ReadLua = (p) => ({ 'a-1.lua': '--#include one.lua\n', 'include/one.lua': '--#include two.lua\n' })[p]!;
    expect(() => expandIncludes('a-1', read('a-1.lua'), read)).toThrow(/one\.lua.*a-1/);
  });

  test('the GCRA is written once: both pace reservations run it from include/gcra.lua', () => {
    const gcra = readLuaFile('include/gcra.lua');
    for (const file of ['pace-reserve-3', 'pace-reserve-safe-6']) {
      const lua = scriptSource(file, readLuaFile);
      expect(lua).toContain(gcra.trimEnd());
      expect(lua).not.toMatch(/^--#include/m);
    }
  });

  test('the loader defines each script with its full body, under a name from the hash of that body', () => {
    for (const [file, { name, lua }] of defined(readLuaFile)) {
      expect(lua).toBe(scriptSource(file, readLuaFile));
      expect(name).toBe(commandName(file, lua));
    }
  });

  test('editing an included file renames exactly the scripts that include it', () => {
    const before = defined(readLuaFile);
    const after = defined(luaWith({ 'include/gcra.lua': `${readLuaFile('include/gcra.lua')}-- edited\n` }));
    const renamed = SCRIPT_FILES.filter((file) => before.get(file)!.name !== after.get(file)!.name);
    expect(renamed.sort()).toEqual(['pace-reserve-3', 'pace-reserve-many-3', 'pace-reserve-safe-6']);
  });

  test('editing a script renames it alone; the same source keeps its name', () => {
    const before = defined(readLuaFile);
    expect(defined(readLuaFile)).toEqual(before);
    const after = defined(luaWith({ 'lock-acquire-1.lua': readLuaFile('lock-acquire-1.lua').replace('if ttl < 0', 'if ttl <= 0') }));
    const renamed = SCRIPT_FILES.filter((file) => before.get(file)!.name !== after.get(file)!.name);
    expect(renamed).toEqual(['lock-acquire-1']);
    expect(after.get('lock-acquire-1')!.name).toMatch(/^mtr_lock_acquire_[0-9a-f]{10}$/);
  });
});
