// What a chat's texts are rendered with: its own variables (a target's `vars`, an audience
// member's columns) and the built-ins Metronome knows of every chat from the account's chat
// directory (`{{chat.title}}`, `{{chat.kind}}`, `{{chat.memberCount}}`). The chat's own win.
// One rule for the API's checks, the test send, run creation (libs/db run-creation.ts builds
// the same object in SQL: directoryVarsSql) and the sender's rendering (message-template.ts).

/** The built-in variables, as a text names them. */
export const BUILTIN_VARIABLES = ['chat.title', 'chat.kind', 'chat.memberCount'] as const;
export type BuiltinVariable = (typeof BUILTIN_VARIABLES)[number];

/** Whether `name` is a built-in variable (filled from the chat directory). */
export const isBuiltinVariable = (name: string): name is BuiltinVariable => (BUILTIN_VARIABLES as readonly string[]).includes(name);

/** What the directory tells of a chat that the built-ins show. */
export interface ChatFacts {
  title: string | null;
  kind: string;
  memberCount: number | null;
}

/**
 * A chat's built-in variables from its directory entry: only what the entry knows (an empty
 * title is none, so a fallback or the 400 applies rather than an empty hole). No entry: none.
 */
export function builtinVars(facts: ChatFacts | null | undefined): Record<string, string> {
  if (!facts) return {};
  const vars: Record<string, string> = { 'chat.kind': facts.kind };
  if (facts.title) vars['chat.title'] = facts.title;
  if (facts.memberCount !== null) vars['chat.memberCount'] = String(facts.memberCount);
  return vars;
}

/**
 * The variables a chat's texts are rendered with: its built-ins, then its own variables, which
 * win over a built-in of the same name. null when it has neither.
 */
export function chatVariables(own: Record<string, string> | null | undefined, facts: ChatFacts | null | undefined): Record<string, string> | null {
  const merged = { ...builtinVars(facts), ...(own ?? {}) };
  return Object.keys(merged).length === 0 ? null : merged;
}
