import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Baileys and GramJS load on first use (libs/transports on-first-use.ts): a service that never
// meets a WhatsApp or Telegram user account never pays their half second of CPU at start. This
// walks the static imports of each service's built entry (`npm test` builds first; dynamic
// `import()` is not followed) and names the packages it reaches.

const ROOT = path.resolve(import.meta.dirname, '../..');
const STATIC_IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm;

/** The packages reached from `entry` by static imports within this repository's built code. */
function packagesReached(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      const own = /^@metronome\/([a-z-]+)(?:\/([a-z-]+))?$/.exec(spec);
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec));
      else if (own) visit(path.join(ROOT, 'libs', own[1]!, 'dist', own[2] ? `${own[2]}/index.js` : 'index.js'));
      else if (!spec.startsWith('node:')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  visit(path.join(ROOT, entry));
  return packages;
}

const HEAVY = ['@whiskeysockets/baileys', 'telegram'];

test.each(['services/control-api/dist/server.js', 'services/sender/dist/main.js', 'services/scheduler/dist/main.js'])(
  '%s starts without Baileys or GramJS',
  (entry) => {
    expect(existsSync(path.join(ROOT, entry))).toBe(true);
    const reached = packagesReached(entry);
    expect(reached.has('fastify') || reached.has('bullmq')).toBe(true);
    expect(HEAVY.filter((p) => reached.has(p))).toEqual([]);
  },
);

test('the walk finds them where they are imported: the WhatsApp and Telegram user entries', () => {
  expect(packagesReached('libs/transports/dist/whatsapp/index.js').has('@whiskeysockets/baileys')).toBe(true);
  expect(packagesReached('libs/transports/dist/telegram-user/index.js').has('telegram')).toBe(true);
});
