import { LIMIT_SETTINGS, type LimitSetting, type SettingPart } from '@metronome/core';
import { z } from 'zod';

// The account fields the limits add (libs/core LIMIT_SETTINGS, e.g. chatCap): built from each
// limit's setting, so a new limit reaches POST, PATCH and GET /v1/accounts without an edit here.

const part = (p: SettingPart) => (p.kind === 'int' ? z.number().int().min(p.min).max(p.max) : z.enum(p.values as [string, ...string[]]));
const input = (s: LimitSetting) => z.strictObject(Object.fromEntries(s.parts.map((p) => [p.name, part(p)])));
const view = (s: LimitSetting) =>
  z.object(Object.fromEntries(s.parts.map((p) => [p.name, p.kind === 'int' ? z.number().int() : z.enum(p.values as [string, ...string[]])])));

type Fields<T> = Record<string, T>;

/** Each limit's field for a create or a patch: `null` turns it off; `absent` says what leaving it out does. */
export function limitInputs(absent: string): Fields<z.ZodOptional<z.ZodNullable<ReturnType<typeof input>>>> {
  return Object.fromEntries(LIMIT_SETTINGS.map((s) => [s.field, input(s).nullable().optional().describe(`*(extension)* ${s.hint}; ${absent}`)]));
}

/** Each limit's field in an account's answer; null: off. */
export function limitViews(): Fields<z.ZodNullable<ReturnType<typeof view>>> {
  return Object.fromEntries(LIMIT_SETTINGS.map((s) => [s.field, view(s).nullable().describe(`*(extension)* ${s.hint}; null: none`)]));
}

/** An account's stored limit settings (accounts.limits) as its answer's fields. */
export function limitValuesView(stored: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(LIMIT_SETTINGS.map((s) => [s.field, stored[s.field] ?? null]));
}

/** The limit settings a create or a patch gives (null: off), by field; absent ones left out. */
export function limitChanges(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(LIMIT_SETTINGS.flatMap((s) => (body[s.field] === undefined ? [] : [[s.field, body[s.field]]])));
}

/** The settings as GET /v1/account-defaults describes them, for a form that shows them (the console). */
export const limitSettingsView = z
  .array(
    z.object({
      field: z.string().describe("the account's field"),
      label: z.string(),
      hint: z.string(),
      parts: z.array(
        z.object({
          name: z.string(),
          label: z.string(),
          kind: z.enum(['int', 'choice']),
          min: z.number().int().optional(),
          max: z.number().int().optional(),
          values: z.array(z.string()).optional(),
        }),
      ),
    }),
  )
  .describe('*(extension)* the account settings that further limits add (e.g. chatCap), each an object of whole numbers and choices; [] when none')
  .meta({ id: 'LimitSettings' });

export function limitSettings(): z.output<typeof limitSettingsView> {
  return LIMIT_SETTINGS.map((s) => ({ ...s, parts: s.parts.map((p) => (p.kind === 'choice' ? { ...p, values: [...p.values] } : p)) }));
}
