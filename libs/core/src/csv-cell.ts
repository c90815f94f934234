// The cells of every CSV the product writes (an audience's export, a run's chats) and reads
// back (an audience upload). Pure, and shared with the console, which builds a run's CSV itself.
//
// The rule, one for all (CONTRACT §Audiences):
// - A cell a spreadsheet would run as a formula starts with `=`, `+`, `-`, `@`, tab or CR
//   (OWASP, CSV injection): it is written with a `'` before it, so a spreadsheet shows text.
// - A value that itself starts with `'` gets one more `'` too, so the escape is never ambiguous.
// - Reading removes one leading `'` only when the next character is one of those seven
//   (`=`, `+`, `-`, `@`, tab, CR, `'`); any other `'` is the value's own. So whatever an export
//   wrote uploads back unchanged, and a hand-written `'plain` keeps its quote.
// - A field holding `,` `"` CR or LF is `"`-quoted (quotes doubled): a lone LF or CR unquoted
//   would start a new row, and a formula after it would begin a cell of its own.

const ESCAPE_BEFORE = /^[=+\-@\t\r']/;
const ESCAPED = /^'[=+\-@\t\r']/;
const NEEDS_QUOTES = /[",\r\n]/;
const SIGNED_INTEGER = /^[+-]\d+$/;

/**
 * A value as a CSV cell's text before quoting: a `'` before a formula start or a `'`.
 * `keepIntegers`: a plain signed integer (a Telegram group's chat id, `-1001234567890`) stays a
 * number, for exports that are read rather than uploaded (a run's chats): it runs nothing.
 */
export function escapeCsvFormula(value: string, keepIntegers = false): string {
  if (keepIntegers && SIGNED_INTEGER.test(value)) return value;
  return ESCAPE_BEFORE.test(value) ? `'${value}` : value;
}

/** A cell read from an upload with the export's escape undone (one `'` before one of `=+-@` tab CR `'`). */
export function unescapeCsvFormula(cell: string): string {
  return ESCAPED.test(cell) ? cell.slice(1) : cell;
}

/** A cell's text as a CSV field: `"`-quoted (inner quotes doubled) when it holds `,` `"` CR or LF. */
export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows as CSV text: escaped, quoted, `,`-delimited, CRLF after every row. */
export function csvRows(rows: readonly (readonly string[])[], keepIntegers = false): string {
  return rows.map((row) => `${row.map((v) => csvField(escapeCsvFormula(v, keepIntegers))).join(',')}\r\n`).join('');
}
