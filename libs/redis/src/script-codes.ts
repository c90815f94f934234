/** Every Lua script's return codes, handed to each script as the table `CODE` so neither side spells a bare number; a wait comes as `{CODE.X, ms}`. */
export const ScriptCode = {
  OK: 0,
  TAKEN: 1,
  HELD: 2,
  BUSY: 3,
  FREE: 4,
  HANDOVER: 5,
  UNCHANGED: 6,
  ACCOUNT_WAIT: 7,
  CHAT_WAIT: 8,
  CAP_MET: 9,
  REBUILD: 10,
  LIMITED: 11,
  HANDED: 12,
  NOT_HOLDER: -1,
} as const;

export type CodeName = keyof typeof ScriptCode;
export type ScriptCodeValue = (typeof ScriptCode)[CodeName];

const NAME_OF = new Map<number, CodeName>(Object.entries(ScriptCode).map(([name, code]) => [code, name as CodeName]));

export function codeName(code: number): CodeName | undefined {
  return NAME_OF.get(code);
}

export function luaCodeTable(): string {
  const fields = Object.entries(ScriptCode).map(([name, code]) => `${name} = ${code}`);
  return `local CODE = { ${fields.join(', ')} }\n`;
}
