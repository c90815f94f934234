/**
 * The return codes of every Lua script, in one place. The loader hands the same numbers to each
 * script as the Lua table `CODE` (see scriptSource), so a script writes `return CODE.TAKEN` and
 * its wrapper decodes `TAKEN`: neither side spells a bare number. A script that also reports a
 * duration returns `{CODE.X, ms}`.
 */
export const ScriptCode = {
  /** done as asked: reserved, extended, released, dropped, rebuilt, moved, allowed */
  OK: 0,
  /** a lock or lease that was free is now the caller's */
  TAKEN: 1,
  /** the caller already held it, and keeps it */
  HELD: 2,
  /** another holder has it (lock-acquire: with its remaining time to live, ms) */
  BUSY: 3,
  /** nobody holds it */
  FREE: 4,
  /** held, and another holder asked for a hand-over */
  HANDOVER: 5,
  /** nothing to do: already rebuilt */
  UNCHANGED: 6,
  /** the account's next slot (pace or human gap) is further away than the caller waits; with the wait, ms */
  ACCOUNT_WAIT: 7,
  /** the chat's next slot is further away than the caller waits; with the wait, ms */
  CHAT_WAIT: 8,
  /** an hourly or daily cap is met; with the time until its window frees a slot, ms */
  CAP_MET: 9,
  /** the account's sends are not in Redis: rebuild them from PostgreSQL, then ask again */
  REBUILD: 10,
  /** a request limit is spent; with the time until the next request is allowed, ms */
  LIMITED: 11,
  /** the caller's token does not hold the lock or lease (lost, or never held) */
  NOT_HOLDER: -1,
} as const;

export type CodeName = keyof typeof ScriptCode;
export type ScriptCodeValue = (typeof ScriptCode)[CodeName];

const NAME_OF = new Map<number, CodeName>(Object.entries(ScriptCode).map(([name, code]) => [code, name as CodeName]));

/** The name of a code a script returned; undefined for a number the enum does not have. */
export function codeName(code: number): CodeName | undefined {
  return NAME_OF.get(code);
}

/** The enum as the Lua table the loader puts before every script. */
export function luaCodeTable(): string {
  const fields = Object.entries(ScriptCode).map(([name, code]) => `${name} = ${code}`);
  return `local CODE = { ${fields.join(', ')} }\n`;
}
