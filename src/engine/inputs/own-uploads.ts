import { urlError } from '../errors.js';

/** Most path segments an output has under /uploads/: `<id>_cropped.jpg` or `<id>/merged_output.mp3`. */
const MAX_SEGMENTS = 2;

/**
 * The output-store path that a URL under one of this server's own `/uploads/` prefixes names, or
 * undefined when the URL is not under any of them (it is then fetched like any other URL).
 *
 * Such a URL is read from the store instead of being fetched, so chaining one result into the
 * next request works while private addresses are refused. Only the shape of a published output
 * qualifies: one or two plain segments. Anything else under the prefix — `..` or `.` (also
 * percent-encoded), an encoded slash or backslash, a leading dot (files being published carry
 * one), a query — is refused with a 400 rather than fetched.
 */
export function ownUploadPath(source: string, bases: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    return undefined;
  }
  // The path as written: WHATWG parsing resolves `..` and `%2e%2e` away, which would hide a traversal attempt.
  // Like the parser, drop tabs and newlines (`.<TAB>.` is `..` to it) and trim; a backslash ends the authority.
  const written = source
    .replace(/[\t\n\r]/g, '')
    .replace(/^[\0-\x20]+|[\0-\x20]+$/g, '')
    .replace(/^[a-z][a-z0-9+.-]*:\/\/[^/\\?#]*/i, '');
  for (const base of bases) {
    const prefix = new URL(`${base.replace(/\/+$/, '')}/uploads/`);
    if (url.origin !== prefix.origin) continue;
    if (!url.pathname.startsWith(prefix.pathname) && !written.toLowerCase().startsWith(prefix.pathname.toLowerCase()))
      continue;
    const refuse = (why: string) => urlError(`Invalid URL '${source}': ${why}`);
    if (
      /%2e|%2f|%5c|\\/i.test(written) ||
      /(^|\/)\.\.?(\/|$|[?#])/.test(written) ||
      !url.pathname.startsWith(prefix.pathname)
    ) {
      throw refuse('not a published output of this server (dot segments or encoded separators)');
    }
    if (url.search || url.hash) throw refuse('an output URL of this server takes no query or fragment');
    const segments = url.pathname.slice(prefix.pathname.length).split('/');
    if (segments.length > MAX_SEGMENTS) throw refuse('not a published output of this server');
    const decoded = segments.map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        throw refuse('its path does not decode');
      }
    });
    if (decoded.some((segment) => segment === '' || segment.startsWith('.') || /[/\\\0]/.test(segment))) {
      throw refuse('not a published output of this server');
    }
    return decoded.join('/');
  }
  return undefined;
}
