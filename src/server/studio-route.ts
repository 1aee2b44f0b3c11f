import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { MediaflowError } from '../engine/errors.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';

/**
 * `GET /studio/`: the studio page (docs/studio.md), the files `npm run build` bundles into dist/studio/ (studio/ at
 * the package's root is their source). They are open, as /docs is: the page holds no data, and every API call it
 * makes carries the key. A production install has no bundler (esbuild is a dev dependency), so there the page may
 * be missing: the route then answers a page that says how to build it (docs/deploy.md#the-studio).
 */

/** The bundle, beside src/ and dist/ whichever this file is in (as config.ts finds the shipped templates). */
const BUNDLE = fileURLToPath(new URL('../../dist/studio/', import.meta.url));

/** The page's files, by name, with their types: nothing else under /studio/ is served. */
const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'studio.js': 'text/javascript; charset=utf-8',
  'studio.css': 'text/css; charset=utf-8',
};

/**
 * Only the page's own origin: its script, its style sheet, API calls, and media under /uploads/. No inline script or
 * style (the editor's styles are constructed style sheets in a shadow root), no plug-in, no frame around it.
 */
export const STUDIO_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "media-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** What a server without the bundle answers at /studio/: no script, no style, a page that says what to do. */
const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mediaflow studio: not built</title></head>
<body><main><h1>The studio is not built in this install</h1>
<p>Its page is made by <code>npm run build</code> when the bundler (esbuild, a dev dependency) is installed, which a
production install (<code>npm ci --omit=dev</code>) leaves out. To have it: run <code>npm ci</code> (with the dev
dependencies), which builds it into <code>dist/studio/</code>, then <code>npm prune --omit=dev</code> to drop them
again. See docs/deploy.md, "The studio".</p>
<p>The API works without it: <a href="../docs">../docs</a> shows its reference.</p></main></body></html>
`;

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', STUDIO_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache');
}

/** The page's schema; its files are hidden from the document, as /docs' are. */
const STUDIO_DOCS = {
  operationId: 'studio',
  summary: 'The studio page: edit and see a render, follow jobs, try operations (MEDIAFLOW_STUDIO=0: off)',
  description:
    'Open without the API key (the page asks for it and sends it with each call). A server built without dev ' +
    'dependencies has no page: 503 with a page that says how to build it.',
  tags: ['server'],
  response: {
    200: { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } },
    503: { description: 'Not built in this install', content: { 'text/html': { schema: { type: 'string' } } } },
  },
};

/** Registers `/studio/` and its files. */
export function registerStudio(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const send = async (reply: FastifyReply, name: string) => {
    const type = FILES[name];
    if (!type) throw new MediaflowError('MF_ERR_NOT_FOUND', `The studio has no file '${name}'`);
    let body: Buffer;
    try {
      body = await readFile(`${BUNDLE}${name}`);
    } catch {
      return secure(reply).status(503).type(FILES['index.html']!).send(NOT_BUILT);
    }
    return secure(reply).type(type).send(body);
  };
  app.get(`${SERVER_PATHS.studio}/`, { schema: STUDIO_DOCS }, async (request, reply) => {
    // The page's links are relative (it may be served under a proxy's sub-path): /studio must become /studio/.
    if (!request.url.split('?')[0]!.endsWith('/')) return reply.redirect('studio/', 301);
    return send(reply, 'index.html');
  });
  app.get(
    `${SERVER_PATHS.studio}/:file`,
    { schema: { hide: true, params: Type.Object({ file: Type.String() }) } },
    async (request, reply) => send(reply, request.params.file),
  );
}
