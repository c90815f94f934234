// The campaign form's state as typed, and its translation to the API's create and PATCH bodies
// and back from the API's field errors. Pure: the form component only renders it.
import { compileText } from '../../libs/core/src/message-template.js';
import { isBuiltinVariable } from '../../libs/core/src/chat-variables.js';
import type { Campaign, CampaignBody, CampaignPatch, FieldError } from './api.js';
import type { PickedChat } from './chat-picker.js';
import { utcToZoned, zonedToUtc } from './zoned-time.js';

export type ScheduleType = 'once' | 'interval' | 'cron';
export type EveryUnit = 'seconds' | 'minutes' | 'hours';

/** Every input of the form, as the operator typed it (strings: nothing typed is ever reshaped). */
export interface Draft {
  name: string;
  accountId: string;
  /** Chats picked from the account's directory, each maybe in a forum topic (sent after the typed ids; a loaded campaign's topic targets are here). */
  picked: PickedChat[];
  /** Chat ids typed by hand, one a line. */
  targets: string;
  audienceIds: string[];
  /** The message: its parts in the order they are sent. */
  parts: DraftPart[];
  scheduleType: ScheduleType;
  at: string;
  every: string;
  everyUnit: EveryUnit;
  startAt: string;
  expression: string;
  timezone: string;
  windowStart: string;
  windowEnd: string;
  active: boolean;
  autoResume: boolean;
  /**
   * Not an input: the variables (personal messages) of the loaded campaign's chats, set through
   * the API, by target key (targetKey). The form shows them and sends each back with its chat
   * while the chat stays listed, so an edit in the console never loses them.
   */
  chatVars: Record<string, Record<string, string>>;
}

/** One message part as typed; `key` keeps a part's inputs with it when parts move. */
export interface DraftPart {
  key: number;
  type: 'text' | 'media';
  text: string;
  mediaId: string;
  caption: string;
}

let nextKey = 1;
export const newPart = (type: DraftPart['type'], text = '', mediaId = '', caption = ''): DraftPart => ({ key: nextKey++, type, text, mediaId, caption });

/** A target as the API shows it: a chat id, or a chat id with its variables. */
export type Target = Campaign['targets'][number];

/** A target's chat id. */
export const chatIdOf = (t: Target): string => (typeof t === 'string' ? t : t.chatId);

/** A chat and its forum topic (absent: none), with the variables typed for it in the form (picked chats). */
export interface TargetRef {
  chatId: string;
  threadId?: number;
  vars?: Record<string, string>;
}

/** A target's key, as the API's (libs/core targetKey): the same chat in two topics is two targets. */
export const targetKey = (t: TargetRef): string => (t.threadId ? `${t.chatId}\u001f${t.threadId}` : t.chatId);

/** A target key as the operator reads it: "chat (topic N)". */
export const keyInWords = (key: string): string => key.replace(/\u001f(\d+)$/, ' (topic $1)');

/** A picked chat with `threadId` as its topic (undefined: none). */
export const withTopic = (p: PickedChat, threadId: number | undefined): PickedChat => {
  const { threadId: _, ...rest } = p;
  return threadId === undefined ? rest : { ...rest, threadId };
};

/** The ids of the inputs a part has (errors name parts by index). */
export const partIds = (p: DraftPart, i: number): string[] => (p.type === 'text' ? [`part-${i}-text`] : [`part-${i}-mediaId`, `part-${i}-caption`]);

const BEFORE_PARTS = ['name', 'accountId', 'targets', 'audienceIds'] as const;
const AFTER_PARTS = ['scheduleType', 'at', 'every', 'startAt', 'expression', 'timezone', 'windowStart', 'windowEnd', 'active', 'autoResume'] as const;
const NAMED = new Set<string>([...BEFORE_PARTS, ...AFTER_PARTS]);

/** The ids of the form's inputs, in the order they appear: the first invalid one takes focus. */
export const fieldOrder = (d: Draft): string[] => {
  const vars = usedVariables(d);
  const picked = d.picked.flatMap((_, i) => vars.map((v) => pickedVarId(i, v.name)));
  return [...BEFORE_PARTS.slice(0, 2), ...picked, ...BEFORE_PARTS.slice(2), ...d.parts.flatMap(partIds), ...AFTER_PARTS];
};
/** An input's id, or `form` for what names no input. */
export type FieldId = string;

const UNIT_SECONDS: Record<EveryUnit, number> = { seconds: 1, minutes: 60, hours: 3600 };

export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/**
 * A new campaign's form: inactive, once, at this minute. Nothing goes out until the operator
 * activates it (and confirms when that sends at once), never "every hour, starting now".
 */
export function emptyDraft(accountId = '', now = Date.now()): Draft {
  const timezone = browserZone();
  return {
    name: '',
    accountId,
    picked: [],
    targets: '',
    audienceIds: [],
    parts: [newPart('text')],
    scheduleType: 'once',
    at: utcToZoned(new Date(now).toISOString(), timezone),
    every: '60',
    everyUnit: 'minutes',
    startAt: '',
    expression: '',
    timezone,
    windowStart: '',
    windowEnd: '',
    active: false,
    autoResume: false,
    chatVars: {},
  };
}

/** The form filled with a stored campaign, for editing. */
export function draftOf(c: Campaign): Draft {
  const s = c.schedule;
  const every = s.type === 'interval' ? s.everySeconds : 3600;
  const unit: EveryUnit = every % 3600 === 0 ? 'hours' : every % 60 === 0 ? 'minutes' : 'seconds';
  return {
    name: c.name,
    accountId: c.accountId,
    // a topic target is a picked chat with its topic (typed lines are chat ids only)
    picked: c.targets.flatMap((t) => (typeof t !== 'string' && t.threadId ? [{ chatId: t.chatId, title: null, threadId: t.threadId }] : [])),
    targets: c.targets
      .filter((t) => typeof t === 'string' || !t.threadId)
      .map(chatIdOf)
      .join('\n'),
    audienceIds: c.audienceIds,
    parts: c.messages.map((m) => (m.type === 'text' ? newPart('text', m.text) : newPart('media', '', m.mediaId, m.caption ?? ''))),
    scheduleType: s.type,
    at: s.type === 'once' ? utcToZoned(s.at, c.timezone) : '',
    every: String(every / UNIT_SECONDS[unit]),
    everyUnit: unit,
    startAt: s.type === 'interval' && s.startAt ? utcToZoned(s.startAt, c.timezone) : '',
    expression: s.type === 'cron' ? s.expression : '',
    timezone: c.timezone,
    windowStart: c.deliveryWindow.start,
    windowEnd: c.deliveryWindow.end,
    active: c.active,
    autoResume: c.autoResume,
    chatVars: Object.fromEntries(c.targets.flatMap((t) => (typeof t === 'string' || !t.vars ? [] : [[targetKey(t), t.vars]]))),
  };
}

/** Chat ids, one a line; blank lines are skipped. `lines[i]` is the 1-based line of target i. */
export function targetsOf(text: string): { targets: string[]; lines: number[] } {
  const targets: string[] = [];
  const lines: number[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const id = line.trim();
    if (id) {
      targets.push(id);
      lines.push(i + 1);
    }
  });
  return { targets, lines };
}

type Part = CampaignBody['messages'][number];

/** The message parts as the API takes them, in order. */
function messagesOf(d: Draft): Part[] {
  return d.parts.map((p) =>
    p.type === 'text' ? { type: 'text', text: p.text } : { type: 'media', mediaId: p.mediaId, ...(p.caption.trim() && { caption: p.caption }) },
  );
}

// An empty number is sent as null, so the API names the field rather than the form guessing.
const numberOr = (s: string): number => (s.trim() === '' ? (null as unknown as number) : Number(s));

function scheduleOf(d: Draft): CampaignBody['schedule'] {
  const instant = (local: string) => (local ? zonedToUtc(local, d.timezone) : local);
  switch (d.scheduleType) {
    case 'once':
      return { type: 'once', at: instant(d.at) };
    case 'cron':
      return { type: 'cron', expression: d.expression };
    case 'interval': {
      const n = numberOr(d.every);
      const everySeconds = n === null ? n : Math.round(n * UNIT_SECONDS[d.everyUnit]);
      return { type: 'interval', everySeconds, ...(d.startAt && { startAt: instant(d.startAt) }) };
    }
  }
}

function windowOf(d: Draft): { start: string; end: string } | undefined {
  if (!d.windowStart.trim() && !d.windowEnd.trim()) return undefined;
  return { start: d.windowStart.trim(), end: d.windowEnd.trim() };
}

/** The typed chat ids, then the picked chats (with their topics) not given already. */
export function allTargets(d: Draft): TargetRef[] {
  const typed: TargetRef[] = targetsOf(d.targets).targets.map((chatId) => ({ chatId }));
  const seen = new Set(typed.map(targetKey));
  const picked = d.picked.map((p): TargetRef => ({ chatId: p.chatId, ...(p.threadId && { threadId: p.threadId }), ...(p.vars && { vars: p.vars }) }));
  return [...typed, ...picked.filter((t) => !seen.has(targetKey(t)) && (seen.add(targetKey(t)), true))];
}

/**
 * A target as the API takes it: a chat id, or an object with its topic and/or variables: those
 * loaded with the campaign, then those typed beside a picked chat (a field left empty gives the
 * chat no value, so the tag's fallback applies).
 */
function targetBody(d: Draft, t: TargetRef): NonNullable<CampaignBody['targets']>[number] {
  const key = targetKey(t);
  const merged: Record<string, string> = { ...(Object.hasOwn(d.chatVars, key) ? d.chatVars[key] : {}), ...t.vars };
  for (const [name, value] of Object.entries(t.vars ?? {})) if (value === '') delete merged[name];
  const vars = Object.keys(merged).length > 0 || Object.hasOwn(d.chatVars, key) ? merged : undefined;
  if (!t.threadId && !vars) return t.chatId;
  return { chatId: t.chatId, ...(t.threadId && { threadId: t.threadId }), ...(vars && { vars }) };
}

/** A variable the message uses that a chat may be given (not a built-in): `fallback` null when some tag has none, so every chat needs a value. */
export interface UsedVariable {
  name: string;
  fallback: string | null;
}

/**
 * The variables the message's texts and captions use, by the API's own rule (libs/core
 * compileText), in order of first use; built-ins (`{{chat.title}}`) left out: the directory
 * fills them. A text that is not a template names none (the API says why).
 */
export function usedVariables(d: Draft): UsedVariable[] {
  const found = new Map<string, UsedVariable>();
  for (const p of d.parts) {
    const compiled = compileText(p.type === 'text' ? p.text : p.caption);
    if (!compiled.ok || compiled.template === null) continue;
    for (const tag of compiled.template.tags.values()) {
      if (isBuiltinVariable(tag.name)) continue;
      const seen = found.get(tag.name);
      if (!seen) found.set(tag.name, { name: tag.name, fallback: tag.fallback });
      else if (tag.fallback === null) seen.fallback = null;
    }
  }
  return [...found.values()];
}

/** The id of the field beside picked chat `index` for variable `name`. */
export const pickedVarId = (index: number, name: string): string => `picked-${index}-var-${name}`;

/** A picked chat with `value` typed for its variable `name`. */
export const withVar = (p: PickedChat, name: string, value: string): PickedChat => ({ ...p, vars: { ...p.vars, [name]: value } });

/** The create body; `tenantId` is the account's tenant when the admin creates it. */
export function createBody(d: Draft, tenantId?: string): CampaignBody {
  const window = windowOf(d);
  return {
    name: d.name,
    accountId: d.accountId,
    targets: allTargets(d).map((t) => targetBody(d, t)),
    // sent only when there are some: an edit without audiences stays as it was
    ...(d.audienceIds.length > 0 && { audienceIds: d.audienceIds }),
    messages: messagesOf(d),
    schedule: scheduleOf(d),
    timezone: d.timezone,
    ...(window && { deliveryWindow: window }),
    active: d.active,
    autoResume: d.autoResume,
    ...(tenantId && { tenantId }),
  };
}

/**
 * Only what changed between the form as loaded and as it is now. Targets go only when the chat
 * list changed, each kept chat with its variables.
 */
export function patchBody(before: Draft, now: Draft): CampaignPatch {
  const a = createBody(before);
  const b = createBody(now);
  const out: Record<string, unknown> = {};
  const keys = ['name', 'accountId', 'targets', 'messages', 'schedule', 'timezone', 'deliveryWindow', 'active', 'autoResume'] as const;
  for (const key of keys) {
    // the schedule's instants are read in the zone: a new zone alone changes them too
    if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) out[key] = b[key] ?? { start: '00:00', end: '24:00' };
  }
  if (JSON.stringify(before.audienceIds) !== JSON.stringify(now.audienceIds)) out['audienceIds'] = now.audienceIds;
  return out as CampaignPatch;
}

/** Each API field error placed beside its input; what names no input goes to the form as a whole. */
export function placeErrors(details: FieldError[], d: Draft): Map<FieldId, string[]> {
  const placed = new Map<FieldId, string[]>();
  const add = (id: FieldId, message: string) => placed.set(id, [...(placed.get(id) ?? []), message]);
  const { lines } = targetsOf(d.targets);
  const targets = allTargets(d);
  const used = new Set(usedVariables(d).map((v) => v.name));
  for (const { field, message } of details) {
    const path = field.split('.');
    const [head, second, third] = path;
    // a picked chat's variable: beside its field
    const varField = head === 'targets' && third === 'vars' ? pickedVarField(d, targets[Number(second)], path.slice(3).join('.'), used) : null;
    if (varField) add(varField, message);
    else if (head === 'targets' && second !== undefined && /^\d+$/.test(second)) {
      const i = Number(second);
      const t = targets[i];
      const picked = t ? keyInWords(targetKey(t)) : String(i + 1);
      add('targets', i < lines.length ? `line ${lines[i]}: ${message}` : `picked chat ${picked}${third === 'threadId' ? ', topic' : ''}: ${message}`);
    } else if (head === 'messages' && second !== undefined && /^\d+$/.test(second) && d.parts[Number(second)]) {
      const i = Number(second);
      const ids = partIds(d.parts[i]!, i);
      add(ids.find((id) => id.endsWith(`-${third}`)) ?? ids[0]!, message);
    } else if (head === 'messages') add(d.parts.length ? partIds(d.parts[0]!, 0)[0]! : 'form', message);
    else if (head === 'schedule') add(SCHEDULE_FIELDS[second ?? ''] ?? 'scheduleType', message);
    else if (head === 'deliveryWindow') add(second === 'end' ? 'windowEnd' : 'windowStart', message);
    else if (head === 'tenantId') add('accountId', message);
    else if (head && NAMED.has(head)) add(head, message);
    else add('form', `${field}: ${message}`);
  }
  return placed;
}

// The field of a picked chat's variable, when the form shows one for it.
function pickedVarField(d: Draft, t: TargetRef | undefined, name: string, used: Set<string>): FieldId | null {
  if (!t || !used.has(name)) return null;
  const index = d.picked.findIndex((p) => targetKey(p) === targetKey(t));
  return index === -1 ? null : pickedVarId(index, name);
}

const SCHEDULE_FIELDS: Record<string, FieldId> = { at: 'at', everySeconds: 'every', startAt: 'startAt', expression: 'expression', type: 'scheduleType' };
