import { createLogger } from './logger.js';
import { routeConsoleToLog } from './library-console.js';

test("a library's console calls become log lines with their text only: no object it printed (a Signal session with its keys) is written", () => {
  const lines: Record<string, unknown>[] = [];
  const saved = { info: console.info, warn: console.warn, error: console.error, log: console.log, debug: console.debug, trace: console.trace };
  try {
    routeConsoleToLog(createLogger('test', 'debug', { write: (l: string) => void lines.push(JSON.parse(l)) }));
    // as libsignal's SessionRecord.closeSession does
    console.info('Closing session:', { currentRatchet: { ephemeralKeyPair: { privKey: Buffer.from('secret-private-key') } } });
    console.error('Failed to decrypt message with any known session...', 3);
    expect(lines).toEqual([
      expect.objectContaining({ level: 20, console: 'info', objectsDropped: 1, msg: 'Closing session:' }),
      expect.objectContaining({ level: 40, console: 'error', msg: 'Failed to decrypt message with any known session... 3' }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret-private-key');
  } finally {
    Object.assign(console, saved);
  }
});
