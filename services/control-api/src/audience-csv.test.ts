import { readMembersCsv, safeCell, writeMembersCsv } from './audience-csv.js';

const read = (text: string, max = 10) => readMembersCsv(Buffer.from(text, 'utf8'), max);

describe('readMembersCsv', () => {
  test('the delimiter is whichever of `,` and `;` the header holds more of', () => {
    expect(read('chatId;name\na,b;c\n')).toEqual({ ok: true, members: [{ chatId: 'a,b', vars: { name: 'c' } }] });
    expect(read('chatId,name\na;b,c\n')).toEqual({ ok: true, members: [{ chatId: 'a;b', vars: { name: 'c' } }] });
  });

  test('the chatId column in any case and place; an empty cell gives no value; repeats merge, the later row winning', () => {
    expect(read('name,CHATID\nAnn,a\n,b\nAnnie,a\n')).toEqual({
      ok: true,
      members: [
        { chatId: 'b', vars: null },
        { chatId: 'a', vars: { name: 'Annie' } },
      ],
    });
  });

  test("the export's formula escape is removed, a quote before anything else is kept", () => {
    expect(read("chatId,x\n'=1,'+2\n'plain,'@x\n")).toEqual({
      ok: true,
      members: [
        { chatId: '=1', vars: { x: '+2' } },
        { chatId: "'plain", vars: { x: '@x' } },
      ],
    });
  });

  test('more rows than allowed, counted before merging', () => {
    const r = read('chatId\na\na\na\n', 2);
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.problems).toEqual([{ field: 'body', message: 'at most 2 rows besides the header' }]);
  });

  test('a header naming chatId twice, or a variable twice, is refused at line 1', () => {
    const r = read('chatId,chatid,x,X\na,b,c,d\n');
    expect(r.ok === false && r.problems.map((p) => p.field)).toEqual(['line 1, column chatid', 'line 1, column X']);
  });
});

describe('writeMembersCsv', () => {
  test.each(['=', '+', '-', '@', '\t', '\r'])('a cell starting with %j is escaped with a quote', (start) => {
    expect(safeCell(`${start}x`)).toBe(`'${start}x`);
  });

  test('plain cells are left alone, and what it writes reads back the same', () => {
    expect(safeCell('a=b')).toBe('a=b');
    const members = [
      { chatId: '-100', vars: { name: '=HYPERLINK("x")', city: 'Oslo' } },
      { chatId: 'b', vars: null },
    ];
    const text = writeMembersCsv(members);
    expect(readMembersCsv(Buffer.from(text, 'utf8'), 10)).toEqual({ ok: true, members });
  });
});

describe('an export uploads back unchanged', () => {
  test('hostile values: lone line breaks, formula starts after them, values that begin with a quote', () => {
    const members = [
      { chatId: "'=1", vars: { name: "Ann\n=cmd|' /C calc'!A0", note: "'" } },
      { chatId: '-100', vars: { name: "''plain", note: '@x\r\n-1' } },
      { chatId: "'plain", vars: { name: '"quoted", and ;', note: 'Bo\r+1' } },
    ];
    const text = writeMembersCsv(members);
    expect(text.startsWith('\ufeffchatId,name,note\r\n')).toBe(true);
    // every physical line outside a quoted field starts with a chat id cell, never a formula
    expect(text).toContain(`"Ann\n=cmd|' /C calc'!A0"`);
    expect(text).toContain(`"'@x\r\n-1"`);
    expect(text).toContain('"Bo\r+1"');
    expect(readMembersCsv(Buffer.from(text, 'utf8'), 10)).toEqual({ ok: true, members });
  });
});
