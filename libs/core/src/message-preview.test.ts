import { compileText, renderText } from './message-template.js';
import { previewTexts } from './message-preview.js';

const key = { runId: 'preview', chatId: 'chat-1' };
const facts = { title: 'Café Central', kind: 'group', memberCount: 9 };

describe('previewTexts', () => {
  it("marks each variable's value with its source: the chat's own, the directory's, the fallback, none", () => {
    const [part] = previewTexts(['Hello {{name|friends}} in {{chat.title}}, {{city}}'], key, { city: 'Oslo' }, facts);
    expect(part).toEqual({
      text: 'Hello friends in Café Central, Oslo',
      spans: [
        { text: 'Hello ', variable: null, from: null },
        { text: 'friends', variable: 'name', from: 'fallback' },
        { text: ' in ', variable: null, from: null },
        { text: 'Café Central', variable: 'chat.title', from: 'directory' },
        { text: ', ', variable: null, from: null },
        { text: 'Oslo', variable: 'city', from: 'own' },
      ],
    });
    // the chat's own value wins over the built-in of the same name; no value and no fallback: as written
    const [own] = previewTexts(['{{chat.title}} {{code}}'], key, { 'chat.title': 'Our café' }, facts);
    expect(own!.spans.map((s) => [s.text, s.from])).toEqual([
      ['Our café', 'own'],
      [' ', null],
      ['{{code}}', 'missing'],
    ]);
  });

  it("renders exactly as the sender's renderText, variations included; plain texts and media without a caption as they are", () => {
    const text = '{Hi|Hello|Hey} {{name|there}}, {see you|bye}';
    for (const chatId of ['a', 'b', 'c', 'd']) {
      const compiled = compileText(text);
      if (!compiled.ok || !compiled.template) throw new Error('not a template');
      const [part] = previewTexts([text], { runId: 'r', chatId }, { name: 'Ann' }, null);
      expect(part!.text).toBe(renderText(compiled.template, { runId: 'r', chatId, partIndex: 0 }, { name: 'Ann' }));
    }
    expect(previewTexts(['Plain', undefined, ''], key, null, null)).toEqual([
      { text: 'Plain', spans: [{ text: 'Plain', variable: null, from: null }] },
      null,
      { text: '', spans: [] },
    ]);
  });
});
