// The order jest starts test files in. A clean clone (CI) has no timing cache, so jest would
// order by file size, and a long end-to-end file could start last and leave one worker alone at
// the end. Files named in test/durations.json (path → seconds, written from a full run by
// `node bench/test-durations.mjs <bench/results/test-time-*.json>`) go first, longest first;
// the others after, in jest's own order (a failed file first, then cached time, then size).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Sequencer from '@jest/test-sequencer';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const durations = JSON.parse(readFileSync(path.join(ROOT, 'test', 'durations.json'), 'utf8'));

export default class LongestFirst extends Sequencer {
  sort(tests) {
    const known = (test) => durations[path.relative(ROOT, test.path).split(path.sep).join('/')];
    // jest's order first, then a stable sort that moves the known files ahead of it
    const ordered = super.sort(tests);
    return ordered
      .map((test, at) => ({ test, at, seconds: known(test) }))
      .sort((a, b) => (b.seconds ?? -1) - (a.seconds ?? -1) || a.at - b.at)
      .map((e) => e.test);
  }
}
