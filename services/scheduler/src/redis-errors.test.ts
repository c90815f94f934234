import { redisErrorLog } from './redis-errors.js';

test('one line per new error; a repeat at most once per interval; each line counts the errors left unlogged before it', () => {
  const lines: { suppressed: number; code: string | undefined }[] = [];
  const logger = { warn: (fields: { err: NodeJS.ErrnoException; suppressed: number }) => lines.push({ suppressed: fields.suppressed, code: fields.err.code }) };
  let now = 0;
  const onError = redisErrorLog(logger as never, () => now, 10_000);
  const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  for (let i = 0; i < 50; i++) {
    onError(refused());
    now += 100;
  }
  onError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
  expect(lines).toEqual([
    { suppressed: 0, code: 'ECONNREFUSED' },
    { suppressed: 49, code: 'ECONNRESET' },
  ]);
  now += 10_000;
  onError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
  expect(lines[2]).toEqual({ suppressed: 0, code: 'ECONNRESET' });
});
