import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { registerDocs } from './docs.js';

/**
 * The OpenAPI document is generated from the zod schemas the routes validate with, so it
 * cannot drift from what the API accepts. `GET /openapi.json` serves it, `GET /docs` browses it.
 * Register before the routes: the document is collected as routes are added.
 */
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
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  registerDocs(app);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
