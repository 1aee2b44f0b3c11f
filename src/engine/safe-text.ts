import { readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * What a message may show a client: no credentials and no path of the server's disk (docs/security.md). The
 * messages are written that way; this is the net under them, at the boundaries where errors leave (the HTTP error
 * handler, a job's stored error, MCP's tool errors), for the text that comes from elsewhere: a URL as the operator set
 * it, a system error's text.
 */

/** A URL's userinfo (`user:secret@`), up to the last `@` of its authority. */
const USERINFO = /\b([a-z][a-z\d+.-]*:\/\/)[^\s/?#'"`<>]*@/gi;

/**
 * An absolute path standing alone: after the start, a space, a quote, a bracket or `=` (never inside a URL, whose
 * path follows its host), up to a space, a quote or a bracket.
 */
const ABSOLUTE_PATH = /(?<=^|[\s'"`([=])\/[^\s'"`()<>[\]]*/g;

/** Used when the root cannot be listed: where servers keep files. */
const USUAL_ROOTS = ['app', 'data', 'etc', 'home', 'mnt', 'opt', 'root', 'run', 'srv', 'tmp', 'usr', 'var', 'work'];

let roots: ReadonlySet<string> | undefined;

/**
 * The entries of this machine's root folder: a path of its disk starts with one, where a route (`/jobs/<id>`,
 * `/uploads/...`), which a message may name, does not.
 */
function rootEntries(): ReadonlySet<string> {
  if (!roots) {
    try {
      roots = new Set(readdirSync('/'));
    } catch {
      roots = new Set(USUAL_ROOTS);
    }
  }
  return roots;
}

/** A URL without its userinfo, as a message may show it. */
export const withoutUserinfo = (text: string): string => text.replace(USERINFO, '$1');

/** `text` with URLs' credentials removed and paths of the server's disk cut to their last name (`ggml-base.bin`). */
export function publicText(text: string): string {
  return withoutUserinfo(text).replace(ABSOLUTE_PATH, (found) => {
    const first = found.split('/')[1] ?? '';
    return rootEntries().has(first) ? path.basename(found) || found : found;
  });
}
