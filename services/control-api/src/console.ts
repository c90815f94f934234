import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { notFound } from './errors.js';

// The operator console (console/dist) at `/` without a token: the page holds no data, every datum comes from /v1 with the
// operator's token. Fixed routes over a fixed file list, so no request names a path on disk.

const FILES: Record<string, string> = {
  'app.js': 'application/javascript; charset=utf-8',
  'app.js.map': 'application/json; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

// Own script and style, this origin only; the pairing QR is a data: image and the CSV export a blob: download.
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export const consoleDist = (): string => path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../console/dist');

export function registerConsole(app: FastifyInstance, dir = consoleDist()): void {
  const cache = new Map<string, Buffer>();
  const load = async (file: string): Promise<Buffer> => {
    let bytes = cache.get(file);
    if (!bytes) {
      try {
        bytes = await readFile(path.join(dir, file));
      } catch {
        throw notFound('console file (run `npm run build` to build the console)');
      }
      cache.set(file, bytes);
    }
    return bytes;
  };

  app.get('/', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .headers(SECURITY_HEADERS)
      .header('cache-control', 'no-cache')
      .send(await load('index.html')),
  );

  app.get('/:file', { schema: { hide: true } }, async (req, reply) => {
    const file = (req.params as { file: string }).file;
    const type = Object.hasOwn(FILES, file) ? FILES[file] : undefined;
    if (type === undefined) throw notFound('file');
    return reply
      .type(type)
      .headers(SECURITY_HEADERS)
      .header('cache-control', 'no-cache')
      .send(await load(file));
  });
}
