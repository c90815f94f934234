import { csvField, csvRows, escapeCsvFormula, unescapeCsvFormula } from './csv-cell.js';

describe('the CSV cell rule', () => {
  test.each([',', '"', '\r', '\n', '\r\n'])('a field holding %j is quoted, inner quotes doubled', (c) => {
    expect(csvField(`a${c}b`)).toBe(`"a${c === '"' ? '""' : c}b"`);
  });

  test('a field without any of them is written as it is', () => {
    expect(csvField("plain ;'=text")).toBe("plain ;'=text");
  });

  test.each(['=', '+', '-', '@', '\t', '\r'])('a value starting with %j gets a leading quote (OWASP)', (start) => {
    expect(escapeCsvFormula(`${start}1+1`)).toBe(`'${start}1+1`);
  });

  test("a value starting with ' gets one more, so the escape is never ambiguous", () => {
    expect(escapeCsvFormula("'=1")).toBe("''=1");
    expect(escapeCsvFormula("'plain")).toBe("''plain");
    expect(escapeCsvFormula('a=b')).toBe('a=b');
  });

  test("reading removes one quote only before = + - @ tab CR or '", () => {
    for (const c of ['=', '+', '-', '@', '\t', '\r', "'"]) expect(unescapeCsvFormula(`'${c}x`)).toBe(`${c}x`);
    expect(unescapeCsvFormula("'plain")).toBe("'plain");
    expect(unescapeCsvFormula("''=x")).toBe("'=x");
    expect(unescapeCsvFormula("'")).toBe("'");
  });

  test('every value comes back from its escape unchanged', () => {
    const values = ['', "'", "''", "'=1", '=1', "'plain", '-100', "'-100", '\t', '\r=x', 'Ann\n=cmd', '@SUM(A1)', 'x'];
    for (const v of values) expect(unescapeCsvFormula(escapeCsvFormula(v))).toBe(v);
  });

  test('a formula after a line break stays inside its quoted field: no line of the file starts one', () => {
    const text = csvRows([
      ['chatId', 'name'],
      ['c-1', "Ann\n=cmd|' /C calc'!A0"],
      ['c-2', 'Bo\r+1'],
    ]);
    expect(text).toBe(`chatId,name\r\nc-1,"Ann\n=cmd|' /C calc'!A0"\r\nc-2,"Bo\r+1"\r\n`);
  });

  test('keepIntegers leaves a plain signed integer a number, and nothing else', () => {
    expect(csvRows([['-1001234567890', '+5', '-1+1', '-']], true)).toBe("-1001234567890,+5,'-1+1,'-\r\n");
    expect(csvRows([['-1001234567890']])).toBe("'-1001234567890\r\n");
  });
});
