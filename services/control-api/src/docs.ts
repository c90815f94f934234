import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { notFound } from './errors.js';

// Swagger UI from swagger-ui-dist, not @fastify/swagger-ui, whose @fastify/static pulls ESM-only packages jest cannot load on Node 20.

const FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Metronome control API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', persistAuthorization: true });</script>
</body>
</html>
`;

export function registerDocs(app: FastifyInstance): void {
  const dir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();

  app.get('/docs', { schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(PAGE));

  app.get('/docs/:file', { schema: { hide: true } }, async (req, reply) => {
    const file = (req.params as { file: string }).file;
    // Only the listed files: the name never reaches the file system unchecked.
    const type = Object.hasOwn(FILES, file) ? FILES[file] : undefined;
    if (type === undefined) throw notFound('file');
    let bytes = cache.get(file);
    if (!bytes) {
      bytes = await readFile(path.join(dir, file));
      cache.set(file, bytes);
    }
    return reply.type(type).header('cache-control', 'public, max-age=86400').send(bytes);
  });
}
