// The cells of every CSV the product writes and reads back (CONTRACT §Audiences); shared with the console. A cell starting with `=`, `+`, `-`, `@`,
// tab, CR or `'` gets a `'` before it (OWASP CSV injection); reading removes only that `'`, so an export uploads back unchanged. A field holding
// `,` `"` CR or LF is quoted: unquoted, it would start a new row.

const ESCAPE_BEFORE = /^[=+\-@\t\r']/;
const ESCAPED = /^'[=+\-@\t\r']/;
const NEEDS_QUOTES = /[",\r\n]/;
const SIGNED_INTEGER = /^[+-]\d+$/;

/** A value as a cell's text before quoting; `keepIntegers`: a signed integer (a Telegram group's id) stays a number in exports only read. */
export function escapeCsvFormula(value: string, keepIntegers = false): string {
  if (keepIntegers && SIGNED_INTEGER.test(value)) return value;
  return ESCAPE_BEFORE.test(value) ? `'${value}` : value;
}

export function unescapeCsvFormula(cell: string): string {
  return ESCAPED.test(cell) ? cell.slice(1) : cell;
}

export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows as CSV text, CRLF after every row. */
export function csvRows(rows: readonly (readonly string[])[], keepIntegers = false): string {
  return rows.map((row) => `${row.map((v) => csvField(escapeCsvFormula(v, keepIntegers))).join(',')}\r\n`).join('');
}
