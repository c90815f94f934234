import { chooseVariations, parseVariations, variationPick } from './variation.js';

describe('parseVariations', () => {
  it('splits groups from literal text', () => {
    expect(parseVariations('{Hi|Hello|Hey}, friend')).toEqual([{ options: ['Hi', 'Hello', 'Hey'] }, { literal: ', friend' }]);
  });

  it('leaves a text without groups as one literal', () => {
    expect(parseVariations('Plain text')).toEqual([{ literal: 'Plain text' }]);
    expect(parseVariations('')).toEqual([{ literal: '' }]);
  });

  it.each([
    ['{x}', 'a brace pair without |'],
    ['{"a": 1}', 'JSON-looking text'],
    ['{a|b', 'an unclosed group'],
    ['a|b}', 'a stray }'],
  ])('keeps %p as text (%s)', (text) => {
    expect(parseVariations(text)).toEqual([{ literal: text }]);
  });

  it('does not nest: the inner group is the group, the outer braces text', () => {
    expect(parseVariations('{a|{b|c}}')).toEqual([{ literal: '{a|' }, { options: ['b', 'c'] }, { literal: '}' }]);
  });

  it('treats {{tags}} as opaque, also inside an option', () => {
    expect(parseVariations('{Hi {{name}}|Hello}!')).toEqual([{ options: ['Hi {{name}}', 'Hello'] }, { literal: '!' }]);
    expect(parseVariations('Dear {{name}}')).toEqual([{ literal: 'Dear {{name}}' }]);
  });

  it('allows an empty option', () => {
    expect(parseVariations('Hi{ there|}')).toEqual([{ literal: 'Hi' }, { options: [' there', ''] }]);
  });
});

describe('variationPick', () => {
  const key = { runId: '3f1c2a5e-0000-4000-8000-000000000001', chatId: 'chat-1', partIndex: 0 };

  it('is the same for the same run, chat, part and group', () => {
    const picks = Array.from({ length: 5 }, () => variationPick(key, 0, 3));
    expect(new Set(picks).size).toBe(1);
    expect(chooseVariations(parseVariations('{a|b|c} {d|e|f}'), key)).toBe(chooseVariations(parseVariations('{a|b|c} {d|e|f}'), { ...key }));
  });

  it('spreads different chats over every option, roughly evenly', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) counts[variationPick({ ...key, chatId: `chat-${i}` }, 0, 3)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(800);
  });

  it('picks independently for each group and part', () => {
    const differs = Array.from({ length: 200 }, (_, i) => ({ ...key, chatId: `c${i}` })).filter(
      (k) => variationPick(k, 0, 2) !== variationPick(k, 1, 2) || variationPick(k, 0, 2) !== variationPick({ ...k, partIndex: 1 }, 0, 2),
    );
    expect(differs.length).toBeGreaterThan(50);
  });

  it('differs between runs for the same chat', () => {
    const picks = new Set(Array.from({ length: 100 }, (_, i) => variationPick({ ...key, runId: `run-${i}` }, 0, 4)));
    expect(picks.size).toBe(4);
  });
});
