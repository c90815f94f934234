import { MIN_SECRET_LENGTH, processSecrets, REDACTED, SecretScrubber } from './secret-scrubber.js';

test('a registered secret is replaced wherever it appears, also URL-encoded and JSON-escaped', () => {
  const s = new SecretScrubber();
  const token = '7012345678:AAH-scrub_probe/ZZZZ+ZZZZ"ZZ';
  s.add(token);
  expect(s.scrub(`POST /bot${token}/sendMessage failed`)).toBe(`POST /bot${REDACTED}/sendMessage failed`);
  expect(s.scrub(`url=${encodeURIComponent(token)}&x=1`)).toBe(`url=${REDACTED}&x=1`);
  expect(s.scrub(JSON.stringify({ detail: `header ${token}` }))).toBe(JSON.stringify({ detail: `header ${REDACTED}` }));
  expect(s.scrub('nothing secret here')).toBe('nothing secret here');
});

test('a secret containing another is replaced whole; regex characters are literal', () => {
  const s = new SecretScrubber();
  s.add('abcdefgh');
  s.add('abcdefgh.ijkl*mnop');
  expect(s.scrub('x abcdefgh.ijkl*mnop y abcdefgh z abcdefghXijkl*mnop')).toBe(`x ${REDACTED} y ${REDACTED} z ${REDACTED}Xijkl*mnop`);
});

test('short strings and non-strings are never registered', () => {
  const s = new SecretScrubber();
  s.add('a'.repeat(MIN_SECRET_LENGTH - 1));
  s.add(12345678);
  s.add(null);
  expect(s.size).toBe(0);
  expect(s.scrub('aaaaaaa 12345678')).toBe('aaaaaaa 12345678');
});

test('beyond its capacity the oldest secret is dropped', () => {
  const s = new SecretScrubber(2);
  s.add('first-secret-1');
  s.add('second-secret-2');
  s.add('third-secret-3');
  expect(s.scrub('first-secret-1 third-secret-3')).toBe(`first-secret-1 ${REDACTED}`);
});

test('a secret registered again keeps every form, also one an older entry had registered first', () => {
  const s = new SecretScrubber(4);
  const secret = 'secret/slash-1';
  // its URL-encoded form is registered first, as a secret of its own
  s.add(encodeURIComponent(secret));
  s.add(secret);
  s.add('other-secret-1');
  s.add('other-secret-2');
  // the oldest entries have gone; the secret, registered again (as on every send), still has all its forms
  s.add(secret);
  expect(s.scrub(`a ${secret} b ${encodeURIComponent(secret)}`)).toBe(`a ${REDACTED} b ${REDACTED}`);
});

test('the process registry is one instance', () => {
  expect(processSecrets()).toBe(processSecrets());
});

test('eight thousand secrets: each found where it appears, several in one text, the longest of those sharing a start', () => {
  const s = new SecretScrubber();
  const secrets = Array.from({ length: 8_000 }, (_, i) => `k${String(i).padStart(6, '0')}-${(i * 7919).toString(36)}`);
  for (const secret of secrets) s.add(secret);
  // one that starts as another does, and is longer
  const longer = `${secrets[1]}-longer`;
  s.add(longer);
  expect(s.scrub(`a ${secrets[0]} b ${secrets[7_999]}${secrets[4_000]} c`)).toBe(`a ${REDACTED} b ${REDACTED}${REDACTED} c`);
  expect(s.scrub(`x ${longer} y ${secrets[1]} z ${secrets[1]!.slice(0, -1)}`)).toBe(`x ${REDACTED} y ${REDACTED} z ${secrets[1]!.slice(0, -1)}`);
  expect(s.scrub(secrets[1]!)).toBe(REDACTED);
});
