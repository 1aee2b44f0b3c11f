/** What to do about an error the command line can lift with a flag, or undefined. */
export function hintFor(message: string): string | undefined {
  // The address policy's refusals ("... is not allowed: it resolves to a loopback address (127.0.0.1)"),
  // all of which --allow-private-urls lifts; a malformed URL or a host off the allowlist is not one.
  if (/is not allowed: .*resolves to an? [a-z -]+ address/.test(message)) {
    return (
      'Hint: add --allow-private-urls (or set MEDIAFLOW_ALLOW_PRIVATE_URLS=1) to allow loopback, private and ' +
      'link-local addresses'
    );
  }
  return undefined;
}
