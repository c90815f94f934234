import { resolveWhatsAppVersion } from './client-version.js';

const logged: unknown[] = [];
const logger = {
  level: 'info',
  child: () => logger,
  trace: () => undefined,
  debug: () => undefined,
  info: (o: unknown) => void logged.push(o),
  warn: (o: unknown) => void logged.push(o),
  error: () => undefined,
};

test('the configured version wins, and nothing is fetched', async () => {
  let fetched = 0;
  const fetch = async () => (fetched++, { version: [2, 3000, 9], isLatest: true });
  expect(await resolveWhatsAppVersion({ configured: [2, 1, 3], fetchLatest: true, logger, fetch })).toEqual({ version: [2, 1, 3], source: 'configured' });
  expect(fetched).toBe(0);
});

test('fetched when asked; offline (or refused), the bundled version, logged', async () => {
  expect(await resolveWhatsAppVersion({ configured: null, fetchLatest: true, logger, fetch: async () => ({ version: [2, 3000, 9], isLatest: true }) })).toEqual(
    { version: [2, 3000, 9], source: 'fetched' },
  );
  // Baileys' own answer offline: its bundled version, isLatest false, with the error
  const offline = async () => ({ version: [2, 3000, 1], isLatest: false, error: new Error('getaddrinfo ENOTFOUND') });
  expect(await resolveWhatsAppVersion({ configured: null, fetchLatest: true, logger, fetch: offline })).toEqual({ version: null, source: 'bundled' });
  const throws = async () => Promise.reject(new Error('boom'));
  expect(await resolveWhatsAppVersion({ configured: null, fetchLatest: true, logger, fetch: throws })).toEqual({ version: null, source: 'bundled' });
  expect(await resolveWhatsAppVersion({ configured: null, fetchLatest: false, logger, fetch: throws })).toEqual({ version: null, source: 'bundled' });
  expect(logged).toContainEqual({ version: 'bundled', source: 'bundled' });
});

test("a fetch that never answers ends at its timeout with the bundled version (Baileys' own fetch has none)", async () => {
  let aborted = false;
  // a server that accepts and never answers: only the signal ends the request
  const stalls = ({ signal }: { signal: AbortSignal }) =>
    new Promise<never>((_resolve, reject) =>
      signal.addEventListener('abort', () => {
        aborted = true;
        reject(signal.reason);
      }),
    );
  expect(await resolveWhatsAppVersion({ configured: null, fetchLatest: true, logger, fetch: stalls, timeoutMs: 1 })).toEqual({
    version: null,
    source: 'bundled',
  });
  expect(aborted).toBe(true);
});
