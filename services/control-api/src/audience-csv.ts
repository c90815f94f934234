// An audience's members as CSV (CONTRACT §3, Audiences): reading an upload and writing an export.
import { escapeCsvFormula, MAX_TARGET_VARS, MAX_THREAD_ID, MAX_VAR_VALUE_LENGTH, targetKey, unescapeCsvFormula, VAR_NAME } from '@metronome/core';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import type { FieldProblem } from './errors.js';
import { chatId as chatIdSchema, text } from './schemas/common.js';

export interface MemberInput {
  chatId: string;
  threadId?: number;
  vars: Record<string, string> | null;
}

/** An upload read: its members (repeated chat ids merged), or every problem found (at most 20). */
export type CsvRead = { ok: true; members: MemberInput[] } | { ok: false; message: string; problems: FieldProblem[] };

const MAX_PROBLEMS = 20;
const varValue = text(0, MAX_VAR_VALUE_LENGTH);

class TooManyRows extends Error {}

type Column = { name: string; kind: 'chat' | 'thread' | 'var' };

/**
 * UTF-8 (a BOM allowed; other bytes refused, never guessed), a `chatId` header (any case), optional `threadId`, a column per
 * variable, `,` or `;` by the header's majority. A repeated chat id takes the later row. Problems name `line N, column X`.
 */
export function readMembersCsv(bytes: Buffer, maxRows: number): CsvRead {
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return refuse('the CSV is not UTF-8 text', [{ field: 'body', message: 'not valid UTF-8: save the file as CSV UTF-8 and upload it again' }]);
  }
  const firstLine = content.slice(0, content.search(/\r?\n|$/));
  const delimiter = count(firstLine, ';') > count(firstLine, ',') ? ';' : ',';

  let header: string[] | null = null;
  let rows = 0;
  const problems: FieldProblem[] = [];
  const byChat = new Map<string, MemberInput>();
  const columns: Column[] = [];
  const problem = (p: FieldProblem) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  try {
    parse(content, {
      delimiter,
      skip_empty_lines: true,
      on_record: (record: string[], context: { lines: number }) => {
        const line = context.lines;
        if (header === null) {
          header = record.map((h) => h.trim());
          readHeader(header, columns, problem);
          return null;
        }
        rows += 1;
        if (rows > maxRows) throw new TooManyRows();
        if (problems.length >= MAX_PROBLEMS) return null;
        const member = readRow(record, columns, line, problem);
        if (member) {
          const key = targetKey(member.chatId, member.threadId);
          byChat.delete(key); // the later row wins, in its own place
          byChat.set(key, member);
        }
        return null;
      },
    });
  } catch (err) {
    if (err instanceof TooManyRows)
      return refuse(`the CSV has more than ${maxRows} rows`, [{ field: 'body', message: `at most ${maxRows} rows besides the header` }]);
    const e = err as { code?: string; lines?: number };
    if (typeof e.code !== 'string' || (!e.code.startsWith('CSV_') && !e.code.startsWith('INVALID_'))) throw err;
    return refuse('the CSV could not be read', [...problems, { field: `line ${e.lines ?? '?'}`, message: parserProblem(e.code) }].slice(0, MAX_PROBLEMS));
  }
  if (header === null) return refuse('the CSV is empty', [{ field: 'body', message: 'expected a header row with a chatId column' }]);
  if (problems.length > 0) return refuse('the CSV has bad rows; nothing was saved', problems);
  if (rows === 0) return refuse('the CSV has no rows', [{ field: 'body', message: 'expected at least one row after the header' }]);
  return { ok: true, members: [...byChat.values()] };
}

function readHeader(header: string[], columns: Column[], problem: (p: FieldProblem) => void): void {
  const seen = new Set<string>();
  let chat = 0;
  let named = 0;
  header.forEach((name, i) => {
    const kind = name.toLowerCase() === 'chatid' ? 'chat' : name.toLowerCase() === 'threadid' ? 'thread' : 'var';
    columns.push({ name, kind });
    if (kind !== 'var') named += 1;
    if (kind === 'chat') chat += 1;
    else if (kind === 'var' && !VAR_NAME.test(name))
      problem({
        field: `line 1, column ${name || i + 1}`,
        message: 'a variable column is named with letters, digits and _, not starting with a digit, at most 64 characters',
      });
    if (seen.has(name.toLowerCase())) problem({ field: `line 1, column ${name}`, message: 'repeated column' });
    seen.add(name.toLowerCase());
  });
  if (chat === 0) problem({ field: 'line 1', message: 'the header has no chatId column' });
  if (header.length - named > MAX_TARGET_VARS) problem({ field: 'line 1', message: `at most ${MAX_TARGET_VARS} variable columns` });
}

function readRow(record: string[], columns: Column[], line: number, problem: (p: FieldProblem) => void): MemberInput | null {
  let chatId: string | null = null;
  let threadId: number | undefined;
  let vars: Record<string, string> | null = null;
  let ok = true;
  record.forEach((raw, i) => {
    const column = columns[i]!;
    // the export's formula escape undone (libs/core csv-cell.ts says the rule)
    const cell = unescapeCsvFormula(raw);
    if (column.kind === 'thread') {
      const topic = cell.trim();
      if (topic === '') return;
      if (!/^\d{1,10}$/.test(topic) || Number(topic) < 1 || Number(topic) > MAX_THREAD_ID) {
        ok = false;
        problem({ field: `line ${line}, column ${column.name}`, message: `a forum topic id is a whole number from 1 to ${MAX_THREAD_ID}, or empty for none` });
        return;
      }
      threadId = Number(topic);
      return;
    }
    const checked = column.kind === 'chat' ? chatIdSchema.safeParse(cell) : varValue.safeParse(cell);
    if (!checked.success) {
      ok = false;
      problem({
        field: `line ${line}, column ${column.name}`,
        message: cell === '' ? 'a chat id is required' : (checked.error.issues[0]?.message ?? 'invalid'),
      });
      return;
    }
    if (column.kind === 'chat') chatId = cell;
    else if (cell !== '') (vars ??= {})[column.name] = cell;
  });
  if (!ok || chatId === null) return null;
  return threadId === undefined ? { chatId, vars } : { chatId, threadId, vars };
}

function parserProblem(code: string): string {
  switch (code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
      return 'this row does not have as many fields as the header';
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted field opened here is never closed';
    case 'INVALID_OPENING_QUOTE':
    case 'CSV_INVALID_OPENING_QUOTE':
      return 'a quote inside an unquoted field: quote the whole field and double the quotes inside it';
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'a quoted field is followed by more text: double the quotes inside it';
    default:
      return 'this line is not valid CSV';
  }
}

const count = (s: string, c: string): number => s.split(c).length - 1;

const refuse = (message: string, problems: FieldProblem[]): CsvRead => ({ ok: false, message, problems });

/** A BOM (spreadsheets then read UTF-8); formula-looking cells get a leading `'`, which readMembersCsv removes again. */
export function writeMembersCsv(members: { chatId: string; threadId?: number; vars: Record<string, string> | null }[]): string {
  const names: string[] = [];
  const seen = new Set<string>();
  for (const m of members) for (const name of Object.keys(m.vars ?? {})) if (!seen.has(name)) seen.add(name), names.push(name);
  // a threadId column only when a member is in a forum topic: other exports stay as they were
  const topics = members.some((m) => m.threadId);
  const rows = members.map((m) => [
    safeCell(m.chatId),
    ...(topics ? [m.threadId ? String(m.threadId) : ''] : []),
    ...names.map((n) => safeCell(m.vars?.[n] ?? '')),
  ]);
  const header = ['chatId', ...(topics ? ['threadId'] : []), ...names];
  // csv-stringify quotes a CRLF but not a lone LF or CR: quoted_match makes it quote those too
  return `\ufeff${stringify([header, ...rows], { record_delimiter: '\r\n', quoted_match: /[\r\n]/ })}`;
}

export const safeCell = (value: string): string => escapeCsvFormula(value);
