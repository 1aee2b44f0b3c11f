import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import {
  addressRefusal,
  checkRedirect,
  checkResolved,
  checkUrl,
  isAddressRefusal,
  type AddressPolicy,
} from '../../../src/engine/inputs/address-guard.js';

const closed: AddressPolicy = { allowPrivate: false, allowedHosts: [] };
const open: AddressPolicy = { allowPrivate: true, allowedHosts: [] };

/** The message checkUrl throws under the closed policy, or undefined when it accepts. */
function refusal(url: string, policy = closed): string | undefined {
  try {
    checkUrl(url, policy);
    return undefined;
  } catch (error) {
    assert.equal((error as { status?: number }).status, 400);
    return (error as Error).message;
  }
}

describe('address guard', () => {
  it('refuses every non-public range and accepts public unicast', () => {
    const refused = [
      '127.0.0.1',
      '127.255.255.254',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '240.0.0.1',
      '192.0.2.1',
      '198.18.0.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::7f00:1',
      '2001:db8::1',
    ];
    for (const address of refused) assert.ok(addressRefusal(address), `${address} should be refused`);
    for (const address of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(addressRefusal(address), undefined, `${address} should be allowed`);
    }
  });

  it('sees through every notation of a literal IP in a URL', () => {
    const urls = [
      'http://127.0.0.1/x',
      'http://2130706433/x',
      'http://0x7f000001/x',
      'http://0x7f.0.0.1/x',
      'http://017700000001/x',
      'http://0177.0.0.01/x',
      'http://127.1/x',
      'http://0/x',
      'http://0.0.0.0/x',
      'http://[::]/x',
      'http://[::1]/x',
      'http://[::ffff:7f00:1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://0xa9fea9fe/',
      'http://10.1/',
      'https://192.168.0.1:8443/',
    ];
    for (const url of urls) assert.match(refusal(url) ?? 'accepted', /is not allowed: it resolves to a/, url);
    assert.equal(refusal('http://127.0.0.1/x', open), undefined);
    assert.equal(refusal('https://8.8.8.8/x'), undefined);
  });

  it('tells its refusals of an address, which allowing private addresses lifts, from its other refusals', () => {
    const lifted = ['http://127.0.0.1/', 'http://10.0.0.1/', 'http://100.64.0.1/', 'http://[::127.0.0.1]/'];
    for (const url of lifted) {
      assert.ok(isAddressRefusal(refusal(url)!), url);
      assert.equal(refusal(url, open), undefined, url);
    }
    const redirected = () =>
      checkRedirect('https://a.example/', 'http://[fe80::1]/', new URL('https://a.example/'), closed);
    assert.throws(redirected, (error: Error) => isAddressRefusal(error.message));
    const allowlist: AddressPolicy = { allowPrivate: true, allowedHosts: ['a.example'] };
    for (const [url, policy] of [
      ['ftp://127.0.0.1/', closed],
      ['not a url', closed],
      ['http://127.0.0.1/', allowlist],
    ] as const) {
      assert.ok(!isAddressRefusal(refusal(url, policy)!), url);
    }
  });

  it('allows only http and https, and names the URL', () => {
    assert.equal(
      refusal('file:///etc/passwd'),
      "Invalid URL 'file:///etc/passwd': only http and https are allowed, not file",
    );
    assert.match(refusal('ftp://example.com/a.mp3')!, /only http and https/);
    assert.match(refusal('gopher://127.0.0.1:25/')!, /only http and https/);
    assert.equal(refusal('not a url'), "Invalid URL 'not a url': not an absolute http(s) URL");
    assert.match(refusal('/etc/passwd')!, /not an absolute/);
  });

  it('applies the host allowlist before anything is resolved', () => {
    const policy = { allowPrivate: false, allowedHosts: ['media.example'] };
    assert.equal(refusal('https://media.example/a.mp3', policy), undefined);
    assert.match(refusal('https://other.example/a.mp3', policy)!, /not in MEDIAFLOW_ALLOWED_HOSTS/);
  });

  it('refuses IPv4-compatible IPv6 (::a.b.c.d), which may be tunnelled to the IPv4 address it embeds', () => {
    for (const address of ['::7f00:1', '::a9fe:a9fe', '::a00:1', '::808:808']) {
      assert.equal(addressRefusal(address), `resolves to a reserved address (${address})`);
    }
    assert.match(refusal('http://[::127.0.0.1]/x')!, /it resolves to a reserved address \(::7f00:1\)$/);
    assert.equal(addressRefusal('0.0.0.0'), 'resolves to an unspecified address (0.0.0.0)');
  });

  it('checks a redirect target like an input URL, naming both', () => {
    const from = new URL('https://media.example/a');
    assert.throws(() => checkRedirect('https://media.example/a', 'http://0xa9fea9fe/latest/', from, closed), {
      status: 400,
      message:
        "URL 'https://media.example/a' is not allowed: it redirects to 'http://169.254.169.254/latest/', " +
        'which resolves to a link-local address (169.254.169.254)',
    });
    assert.throws(() => checkRedirect('https://media.example/a', 'file:///etc/passwd', from, closed), {
      message:
        "URL 'https://media.example/a' is not allowed: it redirects to 'file:///etc/passwd': only http and " +
        'https are allowed, not file',
    });
    assert.throws(
      () =>
        checkRedirect('https://media.example/a', 'https://other.example/b', from, {
          allowPrivate: false,
          allowedHosts: ['media.example'],
        }),
      {
        message:
          "URL 'https://media.example/a' is not allowed: it redirects to 'https://other.example/b', whose " +
          'host other.example is not in MEDIAFLOW_ALLOWED_HOSTS',
      },
    );
    assert.equal(checkRedirect('https://media.example/a', '/b?c=1', from, closed).href, 'https://media.example/b?c=1');
    assert.equal(
      checkRedirect('http://127.0.0.1/a', 'http://127.0.0.1/b', new URL('http://127.0.0.1/a'), open).href,
      'http://127.0.0.1/b',
    );
    assert.throws(() => checkResolved('https://media.example/a', ['10.0.0.5'], closed, 'https://cdn.example/b'), {
      message:
        "URL 'https://media.example/a' is not allowed: it redirects to 'https://cdn.example/b', whose host " +
        'resolves to a private address (10.0.0.5)',
    });
  });

  it('refuses a host when any one of its resolved addresses is private', () => {
    assert.throws(
      () => checkResolved('http://rebind.example/', ['8.8.8.8', '10.0.0.5'], closed),
      /its host resolves to a private address/,
    );
    assert.doesNotThrow(() => checkResolved('http://ok.example/', ['8.8.8.8', '2606:4700::1'], closed));
    assert.doesNotThrow(() => checkResolved('http://local.example/', ['127.0.0.1'], open));
  });
});
