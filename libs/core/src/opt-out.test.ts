import { couldBeOptOut, defaultOptOutKeywords, optOutKeyword } from './opt-out.js';

const keywords = ['STOP', 'UNSUBSCRIBE'];

test('a reply that is a keyword, in any case and with blanks around it, is an opt-out', () => {
  expect(optOutKeyword('stop', keywords)).toBe('STOP');
  expect(optOutKeyword('  Unsubscribe \n', keywords)).toBe('UNSUBSCRIBE');
  expect(optOutKeyword('STOP', keywords)).toBe('STOP');
});

test('a sentence that contains a keyword, or an empty reply, is not', () => {
  expect(optOutKeyword('stop it please', keywords)).toBeNull();
  expect(optOutKeyword('STOP.', keywords)).toBeNull();
  expect(optOutKeyword('   ', keywords)).toBeNull();
  expect(optOutKeyword('stop', [])).toBeNull();
});

test('matching is Unicode-aware: other scripts and composed forms compare by case, accents count', () => {
  expect(optOutKeyword('стоп', ['СТОП'])).toBe('СТОП');
  // "é" typed as e + combining accent matches the composed keyword
  expect(optOutKeyword('d\u00e9sinscrire', ['DE\u0301SINSCRIRE'])).toBe('DE\u0301SINSCRIRE');
  expect(optOutKeyword('stóp', keywords)).toBeNull();
});

test('only WhatsApp and telegram_user accounts get keywords by default', () => {
  expect(defaultOptOutKeywords('whatsapp')).toEqual(['STOP', 'UNSUBSCRIBE']);
  expect(defaultOptOutKeywords('telegram_user')).toEqual(['STOP', 'UNSUBSCRIBE']);
  expect(defaultOptOutKeywords('telegram')).toEqual([]);
  expect(defaultOptOutKeywords('http')).toEqual([]);
});

test('a long reply is told apart before any keyword is read', () => {
  expect(couldBeOptOut('stop')).toBe(true);
  expect(couldBeOptOut('  ')).toBe(false);
  expect(couldBeOptOut('a'.repeat(1000))).toBe(false);
});
