import ipaddr from 'ipaddr.js';
import { urlError } from './errors.js';

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
  const range = parsed.range();
  return range === 'unicast' ? undefined : `resolves to a ${describeRange(range)} address (${parsed.toString()})`;
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

/** The policy one fetch runs under. */
export interface AddressPolicy {
  allowPrivate: boolean;
  /** When not empty, only these host names (lower case) may be fetched. */
  allowedHosts: readonly string[];
}

/** A URL's host without IPv6 brackets, as the WHATWG parser normalised it (decimal, octal and hex IPv4 become dotted). */
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
  const host = bareHost(url);
  if (policy.allowedHosts.length > 0 && !policy.allowedHosts.includes(host.toLowerCase())) {
    throw urlError(`URL '${raw}' is not allowed: host ${host} is not in MEDIAFLOW_ALLOWED_HOSTS`);
  }
  if (!policy.allowPrivate && ipaddr.isValid(host)) {
    const refusal = addressRefusal(host);
    if (refusal) throw urlError(`URL '${raw}' is not allowed: it ${refusal}`);
  }
  return url;
}

/** Throws a 400 when any of the addresses a host resolved to is refused by the policy. */
export function checkResolved(raw: string, addresses: readonly string[], policy: AddressPolicy): void {
  if (policy.allowPrivate) return;
  for (const address of addresses) {
    const refusal = addressRefusal(address);
    if (refusal) throw urlError(`URL '${raw}' is not allowed: its host ${refusal}`);
  }
}
