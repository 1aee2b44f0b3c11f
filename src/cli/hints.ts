import { isAddressRefusal } from '../engine/inputs/address-guard.js';

/** What to do about an error the command line can lift with a flag, or undefined. */
export function hintFor(message: string): string | undefined {
  if (isAddressRefusal(message)) {
    return (
      'Hint: add --allow-private-urls (or set MEDIAFLOW_ALLOW_PRIVATE_URLS=1) to allow loopback, private and ' +
      'link-local addresses'
    );
  }
  return undefined;
}
