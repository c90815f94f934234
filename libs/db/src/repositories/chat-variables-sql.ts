import { BUILTIN_VARIABLES, usesBuiltins } from '@metronome/core';
import { sql, type RawBuilder } from 'kysely';
import type { MessagePart } from '../types.js';

// libs/core chatVariables in SQL: the chat's own variables over its built-ins from the directory row `d` (a left join).

const [TITLE, KIND, MEMBER_COUNT] = BUILTIN_VARIABLES;

/** core builtinVars of the directory row `d` as jsonb: only what it knows, an empty title none; `{}` for no row. */
export const directoryVarsSql = (d: string): RawBuilder<unknown> =>
  sql`jsonb_strip_nulls(jsonb_build_object(${TITLE}::text, nullif(${sql.ref(`${d}.title`)}, ''), ${KIND}::text, ${sql.ref(`${d}.kind`)}, ${MEMBER_COUNT}::text, ${sql.ref(`${d}.member_count`)}::text))`;

/** core chatVariables: the built-ins of `d`, then the chat's own `vars` (which win); null when neither has any. */
export const chatVariablesSql = (vars: RawBuilder<unknown>, d: string): RawBuilder<unknown> =>
  sql`nullif(${directoryVarsSql(d)} || coalesce(${vars}, '{}'::jsonb), '{}'::jsonb)`;

/** Whether a run's parts name a built-in variable: its chats' directory entries are then read. */
export const partsUseBuiltins = (parts: MessagePart[]): boolean => usesBuiltins(parts.map((p) => (p.type === 'text' ? p.text : p.caption)));
