import type { FastifyInstance } from 'fastify';
import iconv from 'iconv-lite';
import { MediaflowError } from '../engine/errors.js';

/**
 * `application/x-www-form-urlencoded` bodies, decoded in the charset their Content-Type declares
 * (`; charset=ISO-8859-1`, as older clients and some form posts send), UTF-8 when it declares
 * none. A field named more than once becomes a list of its values, as in multipart bodies.
 */

/** The `charset` parameter of a Content-Type header. */
export const charsetOf = (contentType: string | undefined): string | undefined =>
  /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')?.[1];

/**
 * One name or value: `+` is a space and `%XX` a byte; the bytes are then read in `charset`. The
 * text is handled as latin1 (one character per byte) until then, so no byte is lost.
 */
function decodeComponent(text: string, charset: string): string {
  const bytes = text
    .replace(/\+/g, ' ')
    .replace(/%([0-9a-f]{2})/gi, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return iconv.decode(Buffer.from(bytes, 'latin1'), charset);
}

/** The fields of an urlencoded body. */
export function parseUrlencoded(body: Buffer, charset = 'utf-8'): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const pair of body.toString('latin1').split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq), charset);
    const value = decodeComponent(eq < 0 ? '' : pair.slice(eq + 1), charset);
    const previous = fields[name];
    fields[name] = previous === undefined ? value : [previous, value].flat();
  }
  return fields;
}

/** Makes `app` read urlencoded bodies up to `bodyLimit` bytes; an unknown charset is a 415. */
export function registerUrlencoded(app: FastifyInstance, bodyLimit: number): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit },
    (request, body, done) => {
      const charset = charsetOf(request.headers['content-type']) ?? 'utf-8';
      if (!iconv.encodingExists(charset)) {
        done(
          new MediaflowError(
            'MF_ERR_MEDIA_TYPE',
            `Unsupported charset '${charset}' in Content-Type: send UTF-8, or a charset such as ISO-8859-1 or ` +
              `windows-1252`,
          ),
          undefined,
        );
        return;
      }
      done(null, parseUrlencoded(body as Buffer, charset));
    },
  );
}
