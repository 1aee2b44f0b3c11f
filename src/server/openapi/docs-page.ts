import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../engine/config.js';
import type { Registry } from '../../engine/plugins/registry.js';
import { documentOptions, finishDocument } from './document.js';
import { SERVER_PATHS } from '../../engine/plugins/reserved.js';

/**
 * How the document is served: as JSON at `/openapi.json`, and as `/docs` (Swagger UI), which shows
 * mediaflow's name in the page title and in the top bar, where @fastify/swagger-ui would show the
 * framework's logo.
 */

/** A word mark, drawn as text so it needs no image file: the top bar shows it 40 px high. */
const WORD_MARK =
  `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" viewBox="0 0 200 40">
<title>mediaflow</title>
<text x="0" y="29" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" ` +
  `font-size="28" font-weight="700" fill="#ffffff">mediaflow</text>
</svg>`;

/** The options of @fastify/swagger-ui that brand the page. */
const DOCS_PAGE = {
  logo: { type: 'image/svg+xml', content: Buffer.from(WORD_MARK) },
  theme: { title: 'mediaflow API' },
};

/**
 * Makes the document from the schemas of the routes registered after this (so it comes first), and serves it at
 * `/openapi.json` (and `/docs/json`) and Swagger UI at `/docs`, none of which the document lists.
 */
export async function registerApiDocs(app: FastifyInstance, registry: Registry, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: documentOptions(registry, config),
    transformObject: finishDocument as never,
    // OpenAPI 3.1 has `const` (the plugins' schemas use it), which @fastify/swagger would rewrite as a one-value enum.
    convertConstToEnum: false,
  });
  await app.register(swaggerUi, {
    routePrefix: SERVER_PATHS.docs,
    staticCSP: true,
    uiConfig: { docExpansion: 'list', deepLinking: true },
    ...DOCS_PAGE,
  });
  app.get(SERVER_PATHS.openapi, { schema: { hide: true } }, async () => app.swagger());
}
