import ipaddr from 'ipaddr.js';
import { urlError } from '../errors.js';

/**
 * Why an address may not be fetched, or undefined when it is public unicast.
 * Everything but public unicast is refused: loopback, private, link-local (cloud metadata at
 * 169.254.169.254 included), CGNAT, multicast, broadcast, unspecified (0.0.0.0, ::) and reserved
 * ranges; IPv6 forms that embed an IPv4 address are judged by that address.
 */
export function addressRefusal(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'is not an IP address';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  let range = parsed.range();
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291) may be tunnelled to the IPv4 address it
  // embeds (Linux's sit driver does so); ipaddr.js calls it unicast, so it is refused here.
  if (
    range === 'unicast' &&
    parsed.kind() === 'ipv6' &&
    (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)
  ) {
    range = 'reserved';
  }
  if (range === 'unicast') return undefined;
  const name = describeRange(range);
  return `resolves to ${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} address (${parsed.toString()})`;
}

function describeRange(range: string): string {
  const names: Record<string, string> = {
    loopback: 'loopback',
    private: 'private',
    uniqueLocal: 'private',
    linkLocal: 'link-local',
    carrierGradeNat: 'carrier-grade NAT',
    multicast: 'multicast',
    broadcast: 'broadcast',
    unspecified: 'unspecified',
  };
  return names[range] ?? 'reserved';
}

/**
 * Whether an error's text is one of the refusals above of an address, all of which allowing private addresses
 * (MEDIAFLOW_ALLOW_PRIVATE_URLS) lifts; a malformed URL or a host off the allowlist is not one.
 */
export const isAddressRefusal = (message: string): boolean =>
  /is not allowed: .*resolves to an? [\w -]+ address \(/.test(message);

/** The policy one fetch runs under. */
export interface AddressPolicy {
  allowPrivate: boolean;
  /** When not empty, only these host names (lower case) may be fetched. */
  allowedHosts: readonly string[];
}

/**
 * A URL's host without IPv6 brackets, as the WHATWG parser normalised it (decimal, octal and hex IPv4 become dotted).
 */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

/**
 * Checks what can be checked before any lookup: scheme, credentials, the host allowlist, and
 * literal IP hosts. Throws a 400 that names the URL and the reason.
 */
export function checkUrl(raw: string, policy: AddressPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw urlError(`Invalid URL '${raw}': not an absolute http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw urlError(`Invalid URL '${raw}': only http and https are allowed, not ${url.protocol.replace(':', '')}`);
  }
  const refusal = hostRefusal(url, policy);
  if (refusal) throw urlError(`URL '${raw}' is not allowed: ${refusal}`);
  return url;
}

/**
 * Why a parsed URL's host may not be fetched before any lookup (the allowlist, a refused literal
 * IP), or undefined. The text continues "URL '...' is not allowed: ".
 */
function hostRefusal(url: URL, policy: AddressPolicy): string | undefined {
  const host = bareHost(url);
  if (!hostAllowed(host, policy)) return `host ${host} is not in MEDIAFLOW_ALLOWED_HOSTS`;
  const refusal = literalRefusal(host, policy);
  return refusal && `it ${refusal}`;
}

const hostAllowed = (host: string, policy: AddressPolicy): boolean =>
  policy.allowedHosts.length === 0 || policy.allowedHosts.includes(host.toLowerCase());

/** Why a host that is a literal IP may not be fetched under the policy, or undefined. */
const literalRefusal = (host: string, policy: AddressPolicy): string | undefined =>
  !policy.allowPrivate && ipaddr.isValid(host) ? addressRefusal(host) : undefined;

/**
 * Checks a redirect's target (`location`, relative to `from`) as `checkUrl` checks an input URL,
 * and throws a 400 that names the URL the user gave and where it redirected.
 */
export function checkRedirect(raw: string, location: string, from: URL, policy: AddressPolicy): URL {
  let url: URL;
  try {
    url = new URL(location, from);
  } catch {
    throw urlError(`URL '${raw}' is not allowed: it redirects to '${location}', which is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw urlError(
      `URL '${raw}' is not allowed: it redirects to '${url.href}': only http and https are allowed, ` +
        `not ${url.protocol.replace(':', '')}`,
    );
  }
  const host = bareHost(url);
  if (!hostAllowed(host, policy)) {
    throw urlError(
      `URL '${raw}' is not allowed: it redirects to '${url.href}', whose host ${host} is not in ` +
        `MEDIAFLOW_ALLOWED_HOSTS`,
    );
  }
  const refusal = literalRefusal(host, policy);
  if (refusal) throw urlError(`URL '${raw}' is not allowed: it redirects to '${url.href}', which ${refusal}`);
  return url;
}

/**
 * Throws a 400 when any of the addresses a host resolved to is refused by the policy. `redirect`
 * is the URL a redirect led to, when the host is that URL's rather than the one the user gave.
 */
export function checkResolved(
  raw: string,
  addresses: readonly string[],
  policy: AddressPolicy,
  redirect?: string,
): void {
  if (policy.allowPrivate) return;
  if (addresses.length === 0) throw urlError(`URL '${raw}' is not allowed: its host resolves to no address`);
  for (const address of addresses) {
    const refusal = addressRefusal(address);
    if (!refusal) continue;
    throw urlError(
      redirect
        ? `URL '${raw}' is not allowed: it redirects to '${redirect}', whose host ${refusal}`
        : `URL '${raw}' is not allowed: its host ${refusal}`,
    );
  }
}
