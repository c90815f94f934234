import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WriteMarks, writeMarkOf } from './write-marks.js';

test('the installed Baileys logs `{ msgId }` right before each write of a message (what the send timeout starts from)', () => {
  const source = readFileSync(join(process.cwd(), 'node_modules/@whiskeysockets/baileys/lib/Socket/messages-send.js'), 'utf8');
  const marks = [...source.matchAll(/logger\.debug\(\{ msgId \}, `sending [^`]*`\);\s*await sendNode\(stanza\);/g)];
  // a newsletter message and every other message: the two writes of relayMessage
  expect(marks).toHaveLength(2);
});

test('a send waiting for its write is told once, by its own account and id only', async () => {
  const marks = new WriteMarks();
  const seen: unknown[] = [];
  const logger = marks.logger('acc', {
    level: 'debug',
    child: () => logger,
    trace: () => undefined,
    debug: (o: unknown) => void seen.push(o),
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
  });
  const mine = marks.expect('acc', 'M1');
  const other = marks.expect('other', 'M1');
  logger.debug({ msgId: 'M1', extra: 1 }, 'not the write line');
  expect(mine.isWritten()).toBe(false);
  logger.debug({ msgId: 'M1' }, 'sending message to 2 devices');
  expect(mine.isWritten()).toBe(true);
  expect(other.isWritten()).toBe(false);
  await mine.written;
  expect(seen).toHaveLength(2);
  expect(writeMarkOf('text')).toBeNull();
});
