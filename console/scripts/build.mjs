// Bundles the console into dist/: one script, one stylesheet and the page, all served by the
// control API at `/` (no CDN at run time). Type checking is `tsc` in the build script.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });
await build({
  entryPoints: [path.join(root, 'src', 'main.tsx')],
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: path.join(dist, 'app.js'),
  logLevel: 'warning',
});
await copyFile(path.join(root, 'src', 'index.html'), path.join(dist, 'index.html'));
await copyFile(path.join(root, 'src', 'styles.css'), path.join(dist, 'app.css'));
