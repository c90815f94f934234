import { newToken } from '@metronome/core';
import { TENANT_TOKEN } from './auth.js';

// Tokens of another shape are refused without a lookup: every token we issue must have it.
test('every tenant token the API issues has the shape the auth hook looks up', () => {
  for (let i = 0; i < 1000; i++) expect(newToken()).toMatch(TENANT_TOKEN);
  expect(TENANT_TOKEN.test(`mtr_${'a'.repeat(31)}`)).toBe(false);
  expect(TENANT_TOKEN.test(`mtr_${'a'.repeat(32)}\n`)).toBe(false);
});
