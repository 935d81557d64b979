import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createJwksFetcher, isNonPublicAddress, JwksFetchError } from '../../src/outbound/jwks-fetcher.js';
import { startKeyServer, type KeyServer } from '../helpers/key-server.js';

/**
 * The jwks_uri fetcher (src/outbound, docs/decisions.md decision 21): which addresses it will not
 * reach unless the operator allows it, and what it does with the answers of a real HTTPS server.
 */

const ADDRESSES: Array<[string, boolean]> = [
  // Public.
  ['93.184.215.14', false],
  ['8.8.8.8', false],
  ['2606:4700:4700::1111', false],
  ['64:ff9b::808:808', false], // NAT64 of 8.8.8.8
  ['2002:808:808::1', false], // 6to4 of 8.8.8.8
  // Loopback, private, link-local, unique-local and the other special-purpose ranges.
  ['127.0.0.1', true],
  ['127.255.255.254', true],
  ['10.1.2.3', true],
  ['172.16.0.1', true],
  ['172.31.255.255', true],
  ['192.168.1.1', true],
  ['169.254.169.254', true], // cloud metadata services
  ['100.64.0.1', true],
  ['0.0.0.0', true],
  ['224.0.0.1', true],
  ['255.255.255.255', true],
  ['::1', true],
  ['::', true],
  ['fe80::1', true],
  ['fe80::1%eth0', true],
  ['fd12:3456:789a::1', true],
  ['fc00::1', true],
  ['ff02::1', true],
  ['::ffff:127.0.0.1', true], // IPv4-mapped
  ['::ffff:7f00:1', true],
  ['::ffff:a9fe:a9fe', true],
  ['64:ff9b::7f00:1', true], // NAT64 of 127.0.0.1
  ['64:ff9b::a00:1', true], // NAT64 of 10.0.0.1
  ['2002:7f00:1::1', true], // 6to4 of 127.0.0.1
  ['2001:db8::1', true],
  ['not an address', true],
];

describe('addresses a jwks_uri fetch does not reach by default', () => {
  for (const [address, refused] of ADDRESSES) {
    it(`${address}: ${refused ? 'refused' : 'allowed'}`, () => {
      assert.equal(isNonPublicAddress(address), refused);
    });
  }
});

describe('the jwks_uri fetcher against an HTTPS server', () => {
  let keys: KeyServer;
  before(async () => {
    keys = await startKeyServer();
    keys.answers.set('/set', { json: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] } });
    keys.answers.set('/exact', { bytes: Buffer.alloc(1000, 0x20) });
    keys.answers.set('/text', { bytes: Buffer.from('<html>not json</html>') });
  });
  after(async () => {
    await keys?.close();
  });

  const allowed = () =>
    createJwksFetcher({ allowPrivateAddresses: true, timeoutMs: 5000, maxBytes: 1000, ca: keys.ca });

  it('returns the parsed document', async () => {
    assert.deepEqual(await allowed().fetch(keys.url('/set')), {
      keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }],
    });
  });

  const REFUSED: Array<[string, () => string, RegExp]> = [
    ['an answer other than 200', () => keys.url('/missing'), /answered 404/],
    ['an answer that is not JSON', () => keys.url('/text'), /not JSON/],
    ['plain http', () => keys.url('/set').replace('https:', 'http:'), /only https/],
    ['not a URL', () => 'keys', /not a URL/],
  ];
  for (const [name, uri, message] of REFUSED) {
    it(`refuses ${name}`, async () => {
      await assert.rejects(allowed().fetch(uri()), (error: unknown) => {
        assert.ok(error instanceof JwksFetchError);
        assert.match(error.message, message);
        return true;
      });
    });
  }

  it('takes an answer of exactly the limit, and refuses one byte more', async () => {
    // 1000 spaces are no JSON document: read whole, then refused as such, not for its size.
    await assert.rejects(allowed().fetch(keys.url('/exact')), /not JSON/);
    const smaller = createJwksFetcher({
      allowPrivateAddresses: true,
      timeoutMs: 5000,
      maxBytes: 999,
      ca: keys.ca,
    });
    await assert.rejects(smaller.fetch(keys.url('/exact')), /larger than 999 bytes/);
  });

  it('does not trust a certificate it was not given', async () => {
    const untrusting = createJwksFetcher({ allowPrivateAddresses: true, timeoutMs: 5000, maxBytes: 1000 });
    await assert.rejects(untrusting.fetch(keys.url('/set')), JwksFetchError);
  });

  it('by default, reaches neither the loopback address nor a name that resolves to it', async () => {
    const before = keys.requests.length;
    const fetcher = createJwksFetcher({
      allowPrivateAddresses: false,
      timeoutMs: 5000,
      maxBytes: 1000,
      ca: keys.ca,
    });
    const port = new URL(keys.origin).port;
    await assert.rejects(fetcher.fetch(keys.url('/set')), /not a public address/);
    await assert.rejects(fetcher.fetch(`https://localhost:${port}/set`), /non-public address/);
    await assert.rejects(fetcher.fetch(`https://[::ffff:127.0.0.1]:${port}/set`), /not a public address/);
    assert.equal(keys.requests.length, before, 'no request reached the server');
  });
});
