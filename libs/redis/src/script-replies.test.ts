import { lockAcquireReplies, lockExtendReplies, lockReleaseSettleReplies } from './account-lock.js';
import { chatReserveReplies, chatSeededReplies, chatSeedReplies } from './chat-limits.js';
import { leaseHoldReplies } from './leader-lease.js';
import { paceReserveManyReplies, paceReserveReplies, paceSeedReplies, safeReserveReplies } from './pace-replies.js';
import { rateLimitPairReplies, rateLimitReplies } from './rate-limit.js';
import { ScriptCode, type CodeName } from './script-codes.js';
import { releaseReplies } from './script-replies.js';
import { expandIncludes } from './script-source.js';
import { readLuaFile, SCRIPT_FILES } from './scripts.js';
import { socketAcquireReplies, socketPeekReplies, socketReleaseReplies, socketRenewReplies } from './socket-lease.js';

// every wrapper's declaration of how it reads its script's replies
const DECLARED = [
  lockAcquireReplies,
  lockExtendReplies,
  lockReleaseSettleReplies,
  releaseReplies,
  leaseHoldReplies,
  paceReserveReplies,
  paceReserveManyReplies,
  safeReserveReplies,
  paceSeedReplies,
  rateLimitReplies,
  rateLimitPairReplies,
  socketAcquireReplies,
  socketRenewReplies,
  socketPeekReplies,
  socketReleaseReplies,
  chatReserveReplies,
  chatSeedReplies,
  chatSeededReplies,
];

const CODE_NAMES = Object.keys(ScriptCode) as CodeName[];

/** The codes named in a script's Lua, its includes too: in its code, and in its comments. */
function codesOf(file: string): { returned: string[]; documented: string[] } {
  const lua = expandIncludes(file, readLuaFile(`${file}.lua`), readLuaFile);
  const comments = [...lua.matchAll(/--\[\[[\s\S]*?\]\]|--[^\n]*/g)].map((m) => m[0]).join('\n');
  const code = lua.replace(/--\[\[[\s\S]*?\]\]|--[^\n]*/g, '');
  const names = (text: string) => [...new Set([...text.matchAll(/CODE\.([A-Za-z_]+)/g)].map((m) => m[1]!))].sort();
  return { returned: names(code), documented: names(comments) };
}

describe('Lua return codes: one enum, decoded in full by every wrapper', () => {
  test('every script has one declaration of how its replies are read', () => {
    expect(DECLARED.map((d) => d.file).sort()).toEqual([...SCRIPT_FILES].sort());
  });

  test.each(DECLARED.map((d) => [d.file, d] as const))('%s: the wrapper decodes exactly the codes the script returns and documents', (file, declared) => {
    const { returned, documented } = codesOf(file);
    expect(returned.length).toBeGreaterThan(0);
    expect(returned.filter((name) => !(name in ScriptCode))).toEqual([]);
    expect([...declared.codes].sort()).toEqual(returned);
    expect(documented).toEqual(returned);
  });

  test('every code of the enum is returned by some script and decoded by its wrapper', () => {
    const decoded = new Set(DECLARED.flatMap((d) => d.codes));
    expect(CODE_NAMES.filter((name) => !decoded.has(name))).toEqual([]);
  });

  test('the enum gives each code its own number', () => {
    expect(new Set(Object.values(ScriptCode)).size).toBe(CODE_NAMES.length);
  });

  test.each(DECLARED.map((d) => [d.file, d] as const))('%s: a code its wrapper does not decode throws, naming the script', (file, declared) => {
    for (const name of CODE_NAMES) {
      const read = () => declared.decode({ code: ScriptCode[name], ms: 5 });
      if (declared.codes.includes(name)) expect(read).not.toThrow();
      else expect(read).toThrow(file);
    }
    expect(() => declared.decode({ code: 99, ms: 0 })).toThrow(/not in ScriptCode/);
  });

  test('codes that carry a duration pass it on', () => {
    expect(lockAcquireReplies.decode({ code: ScriptCode.BUSY, ms: 1234 })).toEqual({ taken: false, retryInMs: 1234 });
    expect(rateLimitReplies.decode({ code: ScriptCode.LIMITED, ms: 77 })).toBe(77);
    expect(safeReserveReplies.decode({ code: ScriptCode.CAP_MET, ms: 9 })).toEqual({ reserved: false, limitedBy: 'cap', waitMs: 9 });
    expect(paceReserveReplies.decode({ code: ScriptCode.CHAT_WAIT, ms: 3 })).toEqual({ reserved: false, limitedBy: 'chat', waitMs: 3 });
    expect(paceReserveManyReplies.decode({ code: ScriptCode.OK, ms: 0, more: [1, 2] })).toEqual({ reserved: true, waitsMs: [0, 1, 2] });
    expect(paceReserveManyReplies.decode({ code: ScriptCode.OK, ms: 5 })).toEqual({ reserved: true, waitsMs: [5] });
    expect(chatReserveReplies.decode({ code: ScriptCode.CAP_MET, ms: 40, more: [2] })).toEqual({ reserved: false, window: 2, waitMs: 40 });
  });
});
