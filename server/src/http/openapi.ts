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
export const generalError = z
  .object({
    data: z.null(),
    error: z.object({
      message: z.string(),
      code: z
        .literal('run_ended')
        .optional()
        .describe("the request's run has ended (a 409, or a 401 for the run's own key or an agent's token): a runner stops its tests"),
      run_state: z.string().nullable().optional().describe("with `code`: the run's end state (`cancelled`, `passed`, …) when known"),
    }),
  })
  .openapi('Error');
export const flatError = z.object({ error: z.string() }).openapi('FlatError');
export const pagination = z
  .object({ page: z.number().int(), per_page: z.number().int(), total: z.number().int(), total_pages: z.number().int() })
  .openapi('Pagination');
