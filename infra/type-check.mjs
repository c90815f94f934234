// `npm run check`: one type check of every library, service and test (tsconfig.json), then the
// console's (console/tsconfig.json), by TypeScript 7, the compiler written in Go (the package
// `typescript-native`, an alias of `typescript@7`): 5 s where TypeScript 5.9's took 22 (and a
// core for 30 s beside the tests). `typescript` stays 5.9 because openapi-typescript (the
// console's API types) calls its JavaScript API, which 7 does not have. Both install a `tsc`
// command, so this names the one it runs by path.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(ROOT, 'node_modules', 'typescript-native', 'bin', 'tsc');

let failed = false;
for (const project of ['tsconfig.json', 'console/tsconfig.json']) {
  const r = spawnSync(process.execPath, [tsc, '-p', project], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`✗ the type check of ${project} failed: see above.`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
