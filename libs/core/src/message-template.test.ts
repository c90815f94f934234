import { builtinVars, chatVariables } from './chat-variables.js';
import { compileText, missingVariable, renderText, usesBuiltins, type MessageTemplate } from './message-template.js';

const key = { runId: '3f1c2a5e-0000-4000-8000-000000000001', chatId: 'chat-1', partIndex: 0 };

function compiled(text: string): MessageTemplate {
  const c = compileText(text);
  if (!c.ok || c.template === null) throw new Error(`not a template: ${text}`);
  return c.template;
}

describe('compileText', () => {
  it('leaves plain texts uncompiled', () => {
    expect(compileText('Hello all')).toEqual({ ok: true, template: null });
    expect(compileText('Price {in} EUR')).toEqual({ ok: true, template: null });
  });

  it('lists the variables a text uses, options included', () => {
    expect(compiled('{Hi|Hello} {{name}}, see you in {{city}} ({{name}})').variables).toEqual(['name', 'city']);
    expect(compiled('{Hi {{first}}|Hello {{last}}}').variables).toEqual(['first', 'last']);
    expect(compiled('{Hi|Hello}').variables).toEqual([]);
  });

  it.each([
    ['{{#vip}}Dear{{/vip}}', '{{#vip}}'],
    ['{{^vip}}x{{/vip}}', '{{^vip}}'],
    ['{{> footer}}', '{{>footer}}'],
    ['{{! note}}', '{{!note}}'],
    ['{{{name}}}', '{{&name}}'],
    ['{{&name}}', '{{&name}}'],
    ['{{=<% %>=}}', '{{='],
  ])('refuses %p (logic-less: plain variables only)', (text, shown) => {
    const c = compileText(text);
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.problem).toContain(shown);
  });

  it.each(['{{user.name}}', '{{1st}}', '{{.}}'])('refuses %p: not a variable name', (text) => {
    expect(compileText(text)).toMatchObject({ ok: false, problem: expect.stringContaining('variable name') });
  });

  it('refuses an unclosed tag', () => {
    expect(compileText('Hello {{name')).toMatchObject({ ok: false, problem: expect.stringContaining('not a valid template') });
  });
});

describe('renderText', () => {
  it('puts each chat its own values, as given (no HTML escaping)', () => {
    const t = compiled('Hello {{name}} from {{city}}');
    expect(renderText(t, key, { name: 'Ann & <Bo>', city: 'Oslo' })).toBe('Hello Ann & <Bo> from Oslo');
    expect(renderText(t, { ...key, chatId: 'chat-2' }, { name: 'Ola', city: 'Bergen' })).toBe('Hello Ola from Bergen');
  });

  it('renders the same text for the same (run, chat), whatever else happened between', () => {
    const t = compiled('{Hi|Hello|Hey|Howdy} {{name}}, {see you|bye|ciao}');
    const first = renderText(t, key, { name: 'Ann' });
    for (let i = 0; i < 20; i++) renderText(t, { ...key, chatId: `other-${i}` }, { name: 'X' });
    expect(renderText(t, key, { name: 'Ann' })).toBe(first);
  });

  it('gives different chats different variations across a large sample', () => {
    const t = compiled('{Hi|Hello|Hey}');
    const seen = new Map<string, number>();
    for (let i = 0; i < 600; i++) {
      const text = renderText(t, { ...key, chatId: `chat-${i}` }, null);
      seen.set(text, (seen.get(text) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual(['Hello', 'Hey', 'Hi']);
    for (const n of seen.values()) expect(n).toBeGreaterThan(120);
  });

  it('keeps a tag the chat has no value for as written', () => {
    expect(renderText(compiled('Code {{code}}'), key, null)).toBe('Code {{code}}');
  });

  it('never reaches inherited properties', () => {
    expect(renderText(compiled('{{constructor}}'), key, {})).toBe('{{constructor}}');
  });
});

describe('missingVariable', () => {
  it('names the first variable a target lacks', () => {
    expect(missingVariable(['name', 'city'], { name: 'Ann' })).toBe('city');
    expect(missingVariable(['name'], null)).toBe('name');
    expect(missingVariable(['name'], { name: '' })).toBeNull();
    expect(missingVariable(['toString'], {})).toBe('toString');
  });
});

describe('fallbacks', () => {
  it('a chat without the variable gets the fallback; one with it, its value', () => {
    const t = compiled('Hello {{name|friends}}!');
    expect(renderText(t, key, null)).toBe('Hello friends!');
    expect(renderText(t, key, { city: 'Oslo' })).toBe('Hello friends!');
    expect(renderText(t, key, { name: 'Ann' })).toBe('Hello Ann!');
    expect(renderText(t, key, { name: '' })).toBe('Hello !');
  });

  it('spaces around the name and the fallback are trimmed; an empty fallback gives nothing', () => {
    expect(renderText(compiled('Hi {{ name | dear guest }}.'), key, null)).toBe('Hi dear guest.');
    expect(renderText(compiled('Hi{{name|}}.'), key, null)).toBe('Hi.');
  });

  it('a variable with a fallback needs no value; used once without one, it does', () => {
    expect(compiled('{{name|there}} {{city}}').variables).toEqual(['city']);
    expect(compiled('{{name|there}}, {{name}}').variables).toEqual(['name']);
    expect(compiled('Hello {{name|there}}').variables).toEqual([]);
  });

  it('a fallback inside a variation option, and punctuation in a fallback', () => {
    const t = compiled("{Hi {{name|y'all}}|Hello {{name|Mr. Smith, Esq.}}}");
    expect(['Hi Ann', 'Hello Ann']).toContain(renderText(t, key, { name: 'Ann' }));
    expect(["Hi y'all", 'Hello Mr. Smith, Esq.']).toContain(renderText(t, key, null));
  });

  it.each(['{{name|a|b}}', '{{name|a{b}}', '{{name|a}b}}'])('%s is refused, naming the tag and the rule', (text) => {
    const c = compileText(text);
    expect(c.ok).toBe(false);
    expect(!c.ok && c.problem).toMatch(/: a fallback \(after the \|\) may not hold \|, \{ or \}$/);
  });

  it('a bad name before the bar is refused as any bad name', () => {
    const c = compileText('{{1st|x}}');
    expect(!c.ok && c.problem).toMatch(/a variable name is letters/);
  });
});

describe('built-in variables', () => {
  const facts = { title: 'Café Central', kind: 'group', memberCount: 12 };

  it('are tags of their own: a text may name them, with or without a fallback; other dotted names are refused', () => {
    const t = compiled('{{chat.title}} ({{chat.kind}}, {{chat.memberCount|some}} members), {{name|friends}}');
    expect(t.variables).toEqual(['chat.title', 'chat.kind']);
    expect(t.builtins).toBe(true);
    expect(compiled('Hello {{name}}').builtins).toBe(false);
    expect(compileText('{{chat.topic}}')).toMatchObject({ ok: false, problem: expect.stringContaining('chat.title, chat.kind, chat.memberCount') });
    expect(usesBuiltins(['plain', 'Hi {{chat.title|there}}'])).toBe(true);
    expect(usesBuiltins(['chat.title as text', undefined, '{{chat.title'])).toBe(false);
  });

  it('come from the directory entry: only what it knows (an empty title is none)', () => {
    expect(builtinVars(facts)).toEqual({ 'chat.title': 'Café Central', 'chat.kind': 'group', 'chat.memberCount': '12' });
    expect(builtinVars({ title: '', kind: 'direct', memberCount: null })).toEqual({ 'chat.kind': 'direct' });
    expect(builtinVars(null)).toEqual({});
  });

  it("render from the chat's variables; its own win over a built-in of the same name; without either, the fallback or the tag as written", () => {
    const t = compiled('Hello {{chat.title|everyone}} of {{chat.memberCount}}, {{name|friends}}');
    expect(renderText(t, key, chatVariables({ name: 'Ann' }, facts))).toBe('Hello Café Central of 12, Ann');
    expect(renderText(t, key, chatVariables(null, null))).toBe('Hello everyone of {{chat.memberCount}}, friends');
    expect(chatVariables({ 'chat.title': 'Own title' }, facts)).toMatchObject({ 'chat.title': 'Own title', 'chat.kind': 'group' });
    expect(chatVariables(null, null)).toBeNull();
    expect(missingVariable(compiled('{{chat.title}} {{name}}').variables, chatVariables({ name: 'Ann' }, { title: null, kind: 'group', memberCount: 3 }))).toBe(
      'chat.title',
    );
  });
});
