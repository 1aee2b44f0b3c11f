/**
 * A thrown value's message as a client may see it: its first non-empty line, at most 200 characters,
 * without absolute paths of the server's disk (POSIX or Windows). A plugin's failure and libvips' use it.
 */
export function shortMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : typeof error === 'string' ? error : `threw ${String(error)}`;
  const first = (text.split('\n').find((l) => l.trim() !== '') ?? '').trim();
  const line = first || (error instanceof Error ? error.name : 'unknown error');
  const scrubbed = line.replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@+-]+){2,}[\\/]?/g, '<path>');
  return scrubbed.length > 200 ? `${scrubbed.slice(0, 197)}...` : scrubbed;
}
