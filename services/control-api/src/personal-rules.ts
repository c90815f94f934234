// Personal messages at the API: the two target shapes, how they are stored, and the rule that
// every variable a text uses exists for every target (libs/core message-template.ts renders).
import { compileText, missingVariable } from '@metronome/core';
import type { MessagePart, TargetVarsByChat } from '@metronome/db';
import type { FieldProblem } from './errors.js';

/** A target as the API takes and shows it: a chat id, or a chat id with its variables. */
export type CampaignTarget = string | { chatId: string; vars: Record<string, string> };

/** A target's chat id. */
export const chatIdOf = (t: CampaignTarget): string => (typeof t === 'string' ? t : t.chatId);

/** A target's variables (null for a plain chat id). */
const varsOf = (t: CampaignTarget): Record<string, string> | null => (typeof t === 'string' ? null : t.vars);

/** The targets as stored: chat ids in order, and the variables of those given as objects (null when none was). */
export function storedTargets(targets: CampaignTarget[]): { targets: string[]; targetVars: TargetVarsByChat | null } {
  const ids = targets.map(chatIdOf);
  const withVars = targets.filter((t): t is Exclude<CampaignTarget, string> => typeof t !== 'string');
  if (withVars.length === 0) return { targets: ids, targetVars: null };
  const byChat: TargetVarsByChat = {};
  for (const t of withVars) byChat[t.chatId] = t.vars;
  return { targets: ids, targetVars: byChat };
}

/** The targets as given: plain chat ids stay strings. */
export function givenTargets(targets: string[], targetVars: TargetVarsByChat | null): CampaignTarget[] {
  if (targetVars === null) return targets;
  return targets.map((chatId) => (Object.hasOwn(targetVars, chatId) ? { chatId, vars: targetVars[chatId]! } : chatId));
}

/**
 * What is wrong with a campaign's texts as templates: a text or caption that is not a plain
 * `{{name}}` template (named by its field), and for each variable used, the first target that
 * has no value for it (`targets.3.vars.name`, the message naming the text that uses it).
 * Pure; create, PATCH and preview apply it to the campaign as it would be saved.
 */
export function personalMessageProblems(messages: MessagePart[], targets: CampaignTarget[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const used = usedVariables(messages, problems);
  for (const [name, field] of used) {
    const index = targets.findIndex((t) => missingVariable([name], varsOf(t)) !== null);
    if (index === -1) continue;
    const target = targets[index]!;
    problems.push({
      field: `targets.${index}.vars.${name}`,
      message:
        typeof target === 'string'
          ? `${field} uses {{${name}}}: give this chat as {"chatId", "vars": {"${name}": …}}`
          : `${field} uses {{${name}}}, and this target has no value for it`,
    });
  }
  return problems;
}

/** The variables the texts use, each with the first field using it; a text that is not a template is added to `problems` when given. */
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
