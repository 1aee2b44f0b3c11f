/**
 * The address scenarios that name non-loopback addresses. They run only inside a network
 * namespace of their own (netns-scenarios.ts, started by netns.test.ts), where nothing but
 * loopback exists: a guard that failed could reach only the namespace's own servers.
 *
 * Inside it, lo carries a pretend-public address (PUBLIC) and several private ones, a stub DNS
 * server answers the .test names, and one HTTP server listens on port 80 of every address. It
 * serves fixtures on PUBLIC; on any other address it serves a valid PNG for every path and counts
 * an "internal" hit, so a request that slipped past the guard would succeed and be seen.
 */
import { ALLOW_PRIVATE_HINT, literal as escaped } from './hostile.js';

export const PUBLIC = '93.184.216.34';
/** Addresses put on lo besides PUBLIC, so that a request to them would be answered. */
export const INTERNAL_V4 = ['10.0.0.1', '169.254.169.254', '192.168.1.1', '172.16.0.1', '100.64.0.1'];
export const INTERNAL_V6 = ['fd00::1'];

/** A valid image on the public server. */
export const GOOD = `http://public.test/f/small-300x200.png`;

/** What the stub DNS server answers. `rebind.test` is public on its first A query and loopback after. */
export const DNS = {
  'public.test': { A: [PUBLIC] },
  'loop.test': { A: ['127.0.0.1'] },
  'private.test': { A: ['10.0.0.1'] },
  'metadata.google.internal': { A: ['169.254.169.254'] },
  'both.test': { A: [PUBLIC, '10.0.0.1'] },
  'v6loop.test': { AAAA: ['::1'] },
  'mapped.test': { AAAA: ['::ffff:127.0.0.1'] },
  'rebind.test': { A: (n: number) => (n === 1 ? [PUBLIC] : ['127.0.0.1']) },
  'n8n.test': { A: ['192.168.1.1'] },
} as const;

export type ServerName = 'closed' | 'allowlist' | 'open' | 'webhooks';

/** Environments of the mediaflow servers in the namespace. */
export const SERVERS: Record<ServerName, Record<string, string>> = {
  closed: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' },
  allowlist: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '0', MEDIAFLOW_ALLOWED_HOSTS: 'public.test, private.test' },
  open: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '1' },
  webhooks: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '0', MEDIAFLOW_WEBHOOK_ALLOWED_HOSTS: 'N8N.test' },
};

export interface NetnsCase {
  name: string;
  server: ServerName;
  /** Sent as image_url to /convert_image_from_url/ with target_format png. */
  url: string;
  /** Sent as webhook_url with it (the request is then asynchronous: 202, then one POST to the hook). */
  webhook?: string;
  expect: {
    /** 202 for an accepted asynchronous request: the scenario waits for its job and its webhook. */
    status: number;
    /** The exact error text, or a pattern where the order of a name's addresses decides it. */
    error?: string | RegExp;
    /** Requests the public server must have seen (default 0 for refusals, 1 for successes). */
    publicHits?: number;
    /** Requests any private address must have seen (default 0). */
    internalHits?: number;
  };
}

const refused = (url: string, why: string) => ({ status: 400, error: `URL '${url}' is not allowed: ${why}` });
/** A refused address, whose answer names the setting that allows it. */
const addressRefused = (url: string, why: string) => refused(url, `${why}${ALLOW_PRIVATE_HINT}`);
const literal = (url: string, what: string, address: string) =>
  addressRefused(url, `it resolves to ${what} address (${address})`);
const resolved = (url: string, what: string, address: string) =>
  addressRefused(url, `its host resolves to ${what} address (${address})`);
const redirect = (target: string) => `http://public.test/redirect?to=${encodeURIComponent(target)}`;

function literals(): NetnsCase[] {
  const table: Array<[string, string, string, string]> = [
    // name, URL, range with article, address as reported
    ['private 10/8, dotted', 'http://10.0.0.1/a.png', 'a private', '10.0.0.1'],
    ['private 10/8, decimal', 'http://167772161/a.png', 'a private', '10.0.0.1'],
    ['private 10/8, hex', 'http://0x0a000001/a.png', 'a private', '10.0.0.1'],
    ['private 10/8, dotted hex', 'http://0xa.0x0.0x0.0x1/a.png', 'a private', '10.0.0.1'],
    ['private 10/8, octal', 'http://012.0.0.01/a.png', 'a private', '10.0.0.1'],
    ['private 10/8, short form', 'http://10.1/a.png', 'a private', '10.0.0.1'],
    ['private 10/8, IPv4-mapped IPv6', 'http://[::ffff:10.0.0.1]/a.png', 'a private', '10.0.0.1'],
    ['private 10/8, IPv4-mapped IPv6 in hex', 'http://[::ffff:a00:1]/a.png', 'a private', '10.0.0.1'],
    ['private 10/8, IPv4-compatible IPv6', 'http://[::10.0.0.1]/a.png', 'a reserved', '::a00:1'],
    [
      'private 10/8, with a port and credentials naming a public host',
      'http://public.test:80@10.0.0.1:80/a.png',
      'a private',
      '10.0.0.1',
    ],
    ['private 192.168/16', 'http://192.168.1.1/a.png', 'a private', '192.168.1.1'],
    ['private 172.16/12', 'http://172.16.0.1/a.png', 'a private', '172.16.0.1'],
    ['private 192.168/16, upper-case scheme and trailing dot', 'HTTP://192.168.1.1./a.png', 'a private', '192.168.1.1'],
    [
      'metadata, dotted',
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'a link-local',
      '169.254.169.254',
    ],
    ['metadata, decimal', 'http://2852039166/latest/meta-data/', 'a link-local', '169.254.169.254'],
    ['metadata, hex', 'http://0xA9FEA9FE/latest/meta-data/', 'a link-local', '169.254.169.254'],
    ['metadata, octal', 'http://0251.0376.0251.0376/latest/meta-data/', 'a link-local', '169.254.169.254'],
    ['metadata, two-part form', 'http://169.254.43518/latest/meta-data/', 'a link-local', '169.254.169.254'],
    [
      'metadata, IPv4-mapped IPv6',
      'http://[::ffff:169.254.169.254]/latest/meta-data/',
      'a link-local',
      '169.254.169.254',
    ],
    [
      'metadata, IPv4-mapped IPv6 in hex',
      'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
      'a link-local',
      '169.254.169.254',
    ],
    ['metadata, NAT64', 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', 'a reserved', '64:ff9b::a9fe:a9fe'],
    [
      'metadata, full-width digits',
      'http://１６９．２５４．１６９．２５４/latest/meta-data/',
      'a link-local',
      '169.254.169.254',
    ],
    [
      'metadata, behind a fragment that names a public host',
      'http://169.254.169.254#@public.test/',
      'a link-local',
      '169.254.169.254',
    ],
    ['carrier-grade NAT', 'http://100.64.0.1/a.png', 'a carrier-grade NAT', '100.64.0.1'],
    ['multicast', 'http://224.0.0.1/a.png', 'a multicast', '224.0.0.1'],
    ['broadcast', 'http://255.255.255.255/a.png', 'a broadcast', '255.255.255.255'],
    ['reserved 240/4', 'http://240.0.0.1/a.png', 'a reserved', '240.0.0.1'],
    ['documentation range', 'http://192.0.2.1/a.png', 'a reserved', '192.0.2.1'],
    ['unspecified 0.0.0.0', 'http://0.0.0.0/a.png', 'an unspecified', '0.0.0.0'],
    ['unspecified, as 0', 'http://0/a.png', 'an unspecified', '0.0.0.0'],
    ['unspecified IPv6 [::]', 'http://[::]/a.png', 'an unspecified', '::'],
    ['unspecified, IPv4-mapped', 'http://[::ffff:0.0.0.0]/a.png', 'an unspecified', '0.0.0.0'],
    ['IPv6 unique local', 'http://[fd00::1]/a.png', 'a private', 'fd00::1'],
    ['IPv6 link-local', 'http://[fe80::1]/a.png', 'a link-local', 'fe80::1'],
    ['IPv6 loopback', 'http://[::1]/a.png', 'a loopback', '::1'],
    ['6to4 wrapping the metadata address', 'http://[2002:a9fe:a9fe::]/a.png', 'a reserved', '2002:a9fe:a9fe::'],
  ];
  return table.map(([name, url, what, address]) => ({
    name: `literal: ${name}`,
    server: 'closed',
    url,
    // The answer shows the URL without its credentials (docs/security.md).
    expect: literal(url.replace(/\/\/[^/?#@]*@/, '//'), what, address),
  }));
}

function names(): NetnsCase[] {
  const cases: NetnsCase[] = [
    {
      name: 'name: resolves to loopback',
      server: 'closed',
      url: 'http://loop.test/a.png',
      expect: resolved('http://loop.test/a.png', 'a loopback', '127.0.0.1'),
    },
    {
      name: 'name: localhost from the hosts file',
      server: 'closed',
      url: 'http://localhost/a.png',
      // localhost has both 127.0.0.1 and ::1; whichever comes first is named.
      expect: {
        status: 400,
        error: new RegExp(
          `^${escaped("URL 'http://localhost/a.png' is not allowed: its host resolves to a loopback address (")}` +
            `(127\\.0\\.0\\.1|::1)\\)${escaped(ALLOW_PRIVATE_HINT)}$`,
        ),
      },
    },
    {
      name: 'name: resolves to a private address',
      server: 'closed',
      url: 'http://private.test/a.png',
      expect: resolved('http://private.test/a.png', 'a private', '10.0.0.1'),
    },
    {
      name: 'name: the metadata host name',
      server: 'closed',
      url: 'http://metadata.google.internal/computeMetadata/v1/',
      expect: resolved('http://metadata.google.internal/computeMetadata/v1/', 'a link-local', '169.254.169.254'),
    },
    {
      name: 'name: one public and one private address (every address is checked)',
      server: 'closed',
      url: 'http://both.test/f/small-300x200.png',
      expect: resolved('http://both.test/f/small-300x200.png', 'a private', '10.0.0.1'),
    },
    {
      name: 'name: IPv6 loopback only',
      server: 'closed',
      url: 'http://v6loop.test/a.png',
      expect: resolved('http://v6loop.test/a.png', 'a loopback', '::1'),
    },
    {
      name: 'name: an IPv4-mapped IPv6 loopback',
      server: 'closed',
      url: 'http://mapped.test/a.png',
      expect: resolved('http://mapped.test/a.png', 'a loopback', '127.0.0.1'),
    },
    {
      name: 'name: does not exist',
      server: 'closed',
      url: 'http://nx.test/a.png',
      expect: { status: 502, error: 'Failed to download http://nx.test/a.png: host not found' },
    },
    {
      name:
        'name: DNS rebinding (public on the first lookup, loopback on any later one) connects to the checked ' +
        'address',
      server: 'closed',
      url: 'http://rebind.test/f/small-300x200.png',
      expect: { status: 200, publicHits: 1 },
    },
  ];
  return cases;
}

function redirects(): NetnsCase[] {
  const table: Array<[string, string, string]> = [
    // name, target, why (after "it redirects to '<normalised target>', ")
    [
      'to the metadata address',
      'http://169.254.169.254/latest/meta-data/',
      'which resolves to a link-local address (169.254.169.254)',
    ],
    ['to loopback in hex', 'http://0x7f000001/a.png', 'which resolves to a loopback address (127.0.0.1)'],
    [
      'to an IPv4-mapped private address',
      'http://[::ffff:10.0.0.1]/a.png',
      'which resolves to a private address (10.0.0.1)',
    ],
    ['to 0.0.0.0', 'http://0.0.0.0/a.png', 'which resolves to an unspecified address (0.0.0.0)'],
    [
      'to a name that resolves to loopback',
      'http://loop.test/a.png',
      'whose host resolves to a loopback address (127.0.0.1)',
    ],
    [
      'to a name that resolves to the metadata address',
      'http://metadata.google.internal/computeMetadata/v1/',
      'whose host resolves to a link-local address (169.254.169.254)',
    ],
  ];
  const cases: NetnsCase[] = table.map(([name, target, why]) => {
    const url = redirect(target);
    return {
      name: `redirect: ${name}`,
      server: 'closed',
      url,
      expect: { ...addressRefused(url, `it redirects to '${new URL(target).href}', ${why}`), publicHits: 1 },
    };
  });
  const file = redirect('file:///etc/passwd');
  const gopher = redirect('gopher://127.0.0.1:6379/_INFO');
  const twice = redirect(redirect('http://10.0.0.1/a.png'));
  cases.push(
    {
      name: 'redirect: to file:',
      server: 'closed',
      url: file,
      expect: {
        ...refused(file, "it redirects to 'file:///etc/passwd': only http and https are allowed, not file"),
        publicHits: 1,
      },
    },
    {
      name: 'redirect: to gopher:',
      server: 'closed',
      url: gopher,
      expect: {
        ...refused(
          gopher,
          "it redirects to 'gopher://127.0.0.1:6379/_INFO': only http and https are allowed, not gopher",
        ),
        publicHits: 1,
      },
    },
    {
      name: 'redirect: public, then to a private address (every hop is checked)',
      server: 'closed',
      url: twice,
      expect: {
        ...addressRefused(
          twice,
          "it redirects to 'http://10.0.0.1/a.png', which resolves to a private address (10.0.0.1)",
        ),
        publicHits: 2,
      },
    },
    {
      name: 'redirect: endless chain stops at the hop limit',
      server: 'closed',
      url: 'http://public.test/hop/0',
      expect: {
        status: 502,
        error: 'Failed to download http://public.test/hop/0: more than 5 redirects',
        publicHits: 6,
      },
    },
    {
      name: 'redirect: to a public fixture is followed',
      server: 'closed',
      url: redirect('/f/small-300x200.png'),
      expect: { status: 200, publicHits: 2 },
    },
  );
  return cases;
}

function controls(): NetnsCase[] {
  return [
    { name: 'control: a public name is fetched', server: 'closed', url: GOOD, expect: { status: 200, publicHits: 1 } },
    {
      name: 'control: a public literal IP is fetched',
      server: 'closed',
      url: `http://${PUBLIC}/f/small-300x200.png`,
      expect: { status: 200, publicHits: 1 },
    },
    // The switch opens private addresses, and shows the internal server would have answered a
    // request that got past the guard.
    {
      name: 'control: MEDIAFLOW_ALLOW_PRIVATE_URLS opens a private name',
      server: 'open',
      url: 'http://private.test/a.png',
      expect: { status: 200, internalHits: 1 },
    },
    {
      name: 'control: MEDIAFLOW_ALLOW_PRIVATE_URLS opens the metadata address',
      server: 'open',
      url: 'http://169.254.169.254/a.png',
      expect: { status: 200, internalHits: 1 },
    },
  ];
}

function allowlist(): NetnsCase[] {
  const viaRedirect = redirect('http://loop.test/a.png');
  return [
    {
      name: 'allowlist: a listed host is fetched',
      server: 'allowlist',
      url: GOOD,
      expect: { status: 200, publicHits: 1 },
    },
    {
      name: 'allowlist: an unlisted host is refused before any lookup',
      server: 'allowlist',
      url: `http://${PUBLIC}/f/small-300x200.png`,
      expect: refused(`http://${PUBLIC}/f/small-300x200.png`, `host ${PUBLIC} is not in MEDIAFLOW_ALLOWED_HOSTS`),
    },
    {
      name: 'allowlist: a listed host that resolves to a private address is still refused',
      server: 'allowlist',
      url: 'http://private.test/a.png',
      expect: resolved('http://private.test/a.png', 'a private', '10.0.0.1'),
    },
    {
      name: 'allowlist: a redirect to an unlisted host is refused',
      server: 'allowlist',
      url: viaRedirect,
      expect: {
        ...refused(
          viaRedirect,
          "it redirects to 'http://loop.test/a.png', whose host loop.test is not in MEDIAFLOW_ALLOWED_HOSTS",
        ),
        publicHits: 1,
      },
    },
  ];
}

/** `webhook_url` passes the same address rule as inputs, checked at submission (400, no job, nothing sent). */
function webhooks(): NetnsCase[] {
  const table: Array<[string, string, string]> = [
    // name, webhook_url, why
    ['the metadata address', 'http://169.254.169.254/latest', 'it resolves to a link-local address (169.254.169.254)'],
    ['a private address', 'http://10.0.0.1/hook', 'it resolves to a private address (10.0.0.1)'],
    [
      'a name that resolves to a private address',
      'http://private.test/hook',
      'its host resolves to a private address (10.0.0.1)',
    ],
    [
      'the metadata host name',
      'http://metadata.google.internal/',
      'its host resolves to a link-local address (169.254.169.254)',
    ],
    ['an IPv6 unique local address', 'http://[fd00::1]/', 'it resolves to a private address (fd00::1)'],
  ];
  const cases: NetnsCase[] = table.map(([name, webhook, why]) => ({
    name: `webhook: refuses ${name} at submission`,
    server: 'closed',
    url: GOOD,
    webhook,
    expect: { status: 400, error: `Invalid webhook_url: URL '${webhook}' is not allowed: ${why}${ALLOW_PRIVATE_HINT}` },
  }));
  // The image is fetched, then the job's webhook is POSTed to the public hook: two public requests.
  cases.push({
    name: 'webhook: a public hook is accepted and receives the webhook',
    server: 'closed',
    url: GOOD,
    webhook: 'http://public.test/hook',
    expect: { status: 202, publicHits: 2 },
  });
  return cases;
}

/**
 * MEDIAFLOW_WEBHOOK_ALLOWED_HOSTS: webhooks reach a named host on a private address (an n8n beside mediaflow), while
 * inputs there, and webhooks to any other private host, stay refused.
 */
function webhookAllowance(): NetnsCase[] {
  return [
    {
      name: 'webhook allowance: a named host on a private address receives the webhook',
      server: 'webhooks',
      url: GOOD,
      webhook: 'http://n8n.test/hook',
      expect: { status: 202, publicHits: 1, internalHits: 1 },
    },
    {
      name: 'webhook allowance: the named host is still refused as an input',
      server: 'webhooks',
      url: 'http://n8n.test/a.png',
      expect: resolved('http://n8n.test/a.png', 'a private', '192.168.1.1'),
    },
    {
      name: 'webhook allowance: another private host is still refused as a webhook',
      server: 'webhooks',
      url: GOOD,
      webhook: 'http://private.test/hook',
      expect: {
        status: 400,
        error:
          "Invalid webhook_url: URL 'http://private.test/hook' is not allowed: its host resolves to a private address " +
          `(10.0.0.1)${ALLOW_PRIVATE_HINT}`,
      },
    },
  ];
}

export const CASES: NetnsCase[] = [
  ...controls(),
  ...literals(),
  ...names(),
  ...redirects(),
  ...allowlist(),
  ...webhooks(),
  ...webhookAllowance(),
];
