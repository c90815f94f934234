// Personal messages at the API: the two target shapes, how they are stored, and the rule that
// every variable a text uses without a fallback exists for every target, its own or a built-in
// from the account's chat directory (libs/core message-template.ts renders, chat-variables.ts
// merges them).
import { chatVariables, compileText, isBuiltinVariable, missingVariable, targetKey, type ChatFacts } from '@metronome/core';
import { ChatDirectoryRepository, type DB, type MessagePart, type TargetVarsByChat } from '@metronome/db';
import type { Kysely } from 'kysely';
import type { FieldProblem } from './errors.js';

/** A target as the API takes and shows it: a chat id, or a chat id with its forum topic and/or variables. */
export type CampaignTarget = string | { chatId: string; threadId?: number; vars?: Record<string, string> };

/** A target's chat id. */
export const chatIdOf = (t: CampaignTarget): string => (typeof t === 'string' ? t : t.chatId);

/** A target's forum topic (Telegram's message_thread_id), undefined for none. */
export const threadIdOf = (t: CampaignTarget): number | undefined => (typeof t === 'string' ? undefined : t.threadId);

/** A target's key (core targetKey): the same chat in two topics is two targets. */
export const keyOfTarget = (t: CampaignTarget): string => targetKey(chatIdOf(t), threadIdOf(t));

/** A target's variables (null for a plain chat id). */
const varsOf = (t: CampaignTarget): Record<string, string> | null => (typeof t === 'string' ? null : (t.vars ?? null));

/**
 * The targets as stored: chat ids in order, the variables of those given with some by target
 * key (null when none was), and each target's topic in order (0: none; null when none names one).
 */
export function storedTargets(targets: CampaignTarget[]): { targets: string[]; targetVars: TargetVarsByChat | null; targetThreads: number[] | null } {
  const ids = targets.map(chatIdOf);
  const threads = targets.some((t) => threadIdOf(t) !== undefined) ? targets.map((t) => threadIdOf(t) ?? 0) : null;
  const withVars = targets.filter((t): t is Exclude<CampaignTarget, string> => typeof t !== 'string' && t.vars !== undefined);
  if (withVars.length === 0) return { targets: ids, targetVars: null, targetThreads: threads };
  const byKey: TargetVarsByChat = {};
  for (const t of withVars) byKey[keyOfTarget(t)] = t.vars!;
  return { targets: ids, targetVars: byKey, targetThreads: threads };
}

/** The targets as given: plain chat ids stay strings; a target with a topic or variables is an object. */
export function givenTargets(targets: string[], targetVars: TargetVarsByChat | null, targetThreads: number[] | null = null): CampaignTarget[] {
  if (targetVars === null && targetThreads === null) return targets;
  return targets.map((chatId, i) => {
    const threadId = targetThreads?.[i] || undefined;
    const key = targetKey(chatId, threadId);
    const vars = targetVars !== null && Object.hasOwn(targetVars, key) ? targetVars[key]! : undefined;
    if (threadId === undefined && vars === undefined) return chatId;
    return { chatId, ...(threadId !== undefined && { threadId }), ...(vars !== undefined && { vars }) };
  });
}

/**
 * What is wrong with a campaign's texts as templates: a text or caption that is not a plain
 * `{{name}}` template (named by its field), and for each variable used without a fallback, the
 * first target that has no value for it (`targets.3.vars.name`, the message naming the text that
 * uses it and the chat, by its directory title where known). A target's values are its own
 * variables over its built-ins (`chat.title`…) from `facts`, the directory's entries by chat id.
 * Pure; create, PATCH and preview apply it to the campaign as it would be saved
 * (namedPersonalProblems reads the directory).
 */
export function personalMessageProblems(messages: MessagePart[], targets: CampaignTarget[], facts: ReadonlyMap<string, ChatFacts> = new Map()): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [name, field, index] of missingVariables(messages, targets, facts, problems)) {
    const chatId = chatIdOf(targets[index]!);
    const title = facts.get(chatId)?.title || undefined;
    // outside text isolated (U+2068…U+2069), so a right-to-left title cannot reorder the sentence
    const chat = title === undefined ? `chat “${isolated(chatId)}”` : `chat “${isolated(title)}” (${isolated(chatId)})`;
    const fix = isBuiltinVariable(name)
      ? `the chat directory does not know it: sync the account's chats, or give the tag a fallback ({{${name}|…}})`
      : `give this chat a value for ${name}, or the tag a fallback ({{${name}|…}})`;
    problems.push({ field: `targets.${index}.vars.${name}`, message: `${field} uses {{${name}}}, and ${chat} has no value for it: ${fix}` });
  }
  return problems;
}

/**
 * personalMessageProblems with the account's directory read in one query: for every target when
 * the texts name a built-in, else only for the chats lacking a value (their titles), else not at all.
 */
export async function namedPersonalProblems(
  db: Kysely<DB>,
  tenantId: string,
  accountId: string,
  messages: MessagePart[],
  targets: CampaignTarget[],
): Promise<FieldProblem[]> {
  const builtins = [...usedVariables(messages).keys()].some(isBuiltinVariable);
  const chats = builtins ? targets.map(chatIdOf) : missingVariables(messages, targets, new Map()).map(([, , index]) => chatIdOf(targets[index]!));
  const facts = chats.length === 0 ? new Map<string, ChatFacts>() : await new ChatDirectoryRepository(db).facts(tenantId, accountId, chats);
  return personalMessageProblems(messages, targets, facts);
}

// Each variable used without a fallback with the first field using it and the first target lacking it.
function missingVariables(
  messages: MessagePart[],
  targets: CampaignTarget[],
  facts: ReadonlyMap<string, ChatFacts>,
  problems?: FieldProblem[],
): [string, string, number][] {
  const found: [string, string, number][] = [];
  for (const [name, field] of usedVariables(messages, problems)) {
    const index = targets.findIndex((t) => missingVariable([name], chatVariables(varsOf(t), facts.get(chatIdOf(t)))) !== null);
    if (index !== -1) found.push([name, field, index]);
  }
  return found;
}

const isolated = (text: string): string => `\u2068${text}\u2069`;

/** The variables the texts use without a fallback, each with the first field using it; a text that is not a template is added to `problems` when given. */
export function usedVariables(messages: MessagePart[], problems?: FieldProblem[]): Map<string, string> {
  const used = new Map<string, string>();
  messages.forEach((m, i) => {
    const field = m.type === 'text' ? `messages.${i}.text` : `messages.${i}.caption`;
    const text = m.type === 'text' ? m.text : m.caption;
    if (text === undefined) return;
    const compiled = compileText(text);
    if (!compiled.ok) problems?.push({ field, message: compiled.problem });
    else for (const name of compiled.template?.variables ?? []) if (!used.has(name)) used.set(name, field);
  });
  return used;
}
