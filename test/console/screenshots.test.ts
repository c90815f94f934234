import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { saveIfChanged } from '../helpers/browser.js';

// The console tests write their screenshots into docs/console. A file whose bytes did not change
// is left untouched, and under CI a file that cannot be written (a read-only checkout) is not a
// failure. A path under a regular file stands for the unwritable place: it fails for root too.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'shots-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('unchanged bytes are not rewritten; changed ones are', async () => {
  const file = path.join(dir, 'page-1280.png');
  expect(await saveIfChanged(file, Buffer.from('one'), false)).toBe('written');
  const before = (await stat(file)).mtimeMs;
  await new Promise((r) => setTimeout(r, 20));
  expect(await saveIfChanged(file, Buffer.from('one'), false)).toBe('unchanged');
  expect((await stat(file)).mtimeMs).toBe(before);
  expect(await saveIfChanged(file, Buffer.from('two'), false)).toBe('written');
  expect(await readFile(file, 'utf8')).toBe('two');
});

test('a place that cannot be written is skipped under CI and an error elsewhere', async () => {
  const blocker = path.join(dir, 'not-a-directory');
  await writeFile(blocker, 'x');
  const file = path.join(blocker, 'page-390.png');
  expect(await saveIfChanged(file, Buffer.from('png'), true)).toBe('skipped');
  await expect(saveIfChanged(file, Buffer.from('png'), false)).rejects.toThrow(/ENOTDIR|EEXIST/);
});
