// What a chat's texts are rendered with: its own variables over the built-ins from the account's chat directory (`{{chat.title}}`…). One rule for
// the API, the test send, run creation (libs/db directoryVarsSql builds the same in SQL) and the sender's rendering.

export const BUILTIN_VARIABLES = ['chat.title', 'chat.kind', 'chat.memberCount'] as const;
export type BuiltinVariable = (typeof BUILTIN_VARIABLES)[number];

export const isBuiltinVariable = (name: string): name is BuiltinVariable => (BUILTIN_VARIABLES as readonly string[]).includes(name);

export interface ChatFacts {
  title: string | null;
  kind: string;
  memberCount: number | null;
}

/** A chat's built-ins from its directory entry: an empty title is none, so a fallback or the 400 applies rather than a hole. */
export function builtinVars(facts: ChatFacts | null | undefined): Record<string, string> {
  if (!facts) return {};
  const vars: Record<string, string> = { 'chat.kind': facts.kind };
  if (facts.title) vars['chat.title'] = facts.title;
  if (facts.memberCount !== null) vars['chat.memberCount'] = String(facts.memberCount);
  return vars;
}

export function chatVariables(own: Record<string, string> | null | undefined, facts: ChatFacts | null | undefined): Record<string, string> | null {
  const merged = { ...builtinVars(facts), ...(own ?? {}) };
  return Object.keys(merged).length === 0 ? null : merged;
}
