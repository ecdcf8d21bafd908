import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  return registry;
}

export function generateDocument(registry: OpenAPIRegistry, serverUrl: string) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Proctor',
      version: '1.0.0',
      description: 'Runs and tracks Playwright end-to-end tests for a project.',
    },
    servers: [{ url: serverUrl }],
  });
}

/** Shared response pieces. */
export const generalError = z.object({ data: z.null(), error: z.object({ message: z.string() }) }).openapi('Error');
export const flatError = z.object({ error: z.string() }).openapi('FlatError');
export const pagination = z
  .object({ page: z.number().int(), per_page: z.number().int(), total: z.number().int(), total_pages: z.number().int() })
  .openapi('Pagination');
