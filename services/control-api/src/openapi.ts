import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { registerDocs } from './docs.js';
import { withRequestBodies } from './openapi-bodies.js';

/** Generated from the routes' zod schemas, so it cannot drift; register before the routes, as they are collected. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Metronome control API',
        version: '1',
        description:
          'Scheduled broadcasts from messaging accounts. Every /v1 route needs `Authorization: Bearer <token>`; ' +
          "another tenant's resource answers 404 exactly like a missing one.",
      },
      // Relative: the API itself, wherever it is reached (the document is served by it).
      servers: [{ url: '/', description: 'this API, at the address this document was fetched from' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          platformKey: { type: 'http', scheme: 'bearer', description: "an http account's API key (the platform's receipts)" },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: (document) => withReachableSchemas(withRequestBodies(jsonSchemaTransformObject(document))),
  });
  registerDocs(app);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** Only the named schemas the operations reach: the registry yields input and output variants most nothing references. */
export function withReachableSchemas<T extends { paths?: unknown; components?: { schemas?: Record<string, unknown> } }>(document: T): T {
  const all = document.components?.schemas ?? {};
  const reached = new Set<string>();
  const pending = [JSON.stringify(document.paths ?? {})];
  for (let text = pending.pop(); text !== undefined; text = pending.pop()) {
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (name === undefined || reached.has(name) || !Object.hasOwn(all, name)) continue;
      reached.add(name);
      pending.push(JSON.stringify(all[name]));
    }
  }
  const schemas = Object.fromEntries(Object.entries(all).filter(([name]) => reached.has(name)));
  return { ...document, components: { ...document.components, schemas } };
}
