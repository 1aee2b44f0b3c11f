/**
 * How `/docs` (Swagger UI) presents itself: mediaflow's name in the page title and in the top
 * bar, where @fastify/swagger-ui would show the framework's logo.
 */

/** A word mark, drawn as text so it needs no image file: the top bar shows it 40 px high. */
const WORD_MARK = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" viewBox="0 0 200 40">
<title>mediaflow</title>
<text x="0" y="29" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="28" font-weight="700" fill="#ffffff">mediaflow</text>
</svg>`;

/** The options of @fastify/swagger-ui that brand the page. */
export const DOCS_PAGE = {
  logo: { type: 'image/svg+xml', content: Buffer.from(WORD_MARK) },
  theme: { title: 'mediaflow API' },
};
